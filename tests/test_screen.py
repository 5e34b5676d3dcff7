"""The screen (leaklint/screen.py): the rules run first on a tree built from ``ast``; libcst parses
only files where one fires, and what is reported always comes from libcst's tree.

tests/test_prefilter.py and tests/test_engine.py compare screened and unscreened lints on every
rule example and fixture; this file checks what the screen decides, and its fallbacks.
"""

from __future__ import annotations

import ast
import textwrap

import pytest

import leaklint.analysis.parsing
import leaklint.screen
from leaklint.config import Settings
from leaklint.engine import lint_text
from leaklint.findings import Confidence
from leaklint.registry import all_rules
from leaklint.screen import may_report

RULES = list(all_rules().values())
LOW = Settings(select=("ALL",), min_confidence=Confidence.LOW)

#: Passes the gate (a training loop that accumulates), but accumulates floats: no finding.
CLEAN_LOOP = """\
import torch

def train(model, loader, optimizer, criterion):
    total = 0.0
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item()
    return total
"""

#: The same loop keeping the graph of every step, written so that positions matter.
LEAKY_LOOP = """\
import torch

def train(model, loader, optimizer, criterion):
    total = 0.0
    for x, y in loader:
        loss = criterion(model(x), y)  # a comment the built tree does not have
        loss.backward()
        optimizer.step()
        total += (  loss  )
    return total
"""


@pytest.fixture
def libcst_parses(monkeypatch):
    """The sources libcst parsed during the test."""
    parsed: list[str] = []
    real = leaklint.analysis.parsing.parse_module

    def counting(text: str):
        parsed.append(text)
        return real(text)

    monkeypatch.setattr(leaklint.analysis.parsing, "parse_module", counting)
    return parsed


def test_a_file_the_gate_passes_but_no_rule_fires_in_is_never_parsed_with_libcst(libcst_parses):
    assert may_report(CLEAN_LOOP, ast.parse(CLEAN_LOOP), RULES) is False
    outcome = lint_text(CLEAN_LOOP, "train.py", RULES, LOW)
    assert (outcome.findings, outcome.errors, libcst_parses) == ([], [], [])


def test_a_file_where_a_rule_fires_is_linted_on_libcsts_tree(libcst_parses):
    assert may_report(LEAKY_LOOP, ast.parse(LEAKY_LOOP), RULES) is True
    [finding] = lint_text(LEAKY_LOOP, "train.py", RULES, Settings()).findings
    assert libcst_parses == [LEAKY_LOOP]
    assert (finding.code, finding.line, finding.column) == ("LL101", 9, 9)  # positions from the source
    assert finding.fix is not None and finding.fix.edits[0].replacement == "loss.detach()"


def test_what_the_built_tree_cannot_see_only_makes_the_screen_say_yes():
    """A comment that silences a rule (``# noqa: B019``) is not in the built tree: the screen lets
    the file through, and the exact run, which reads the comment, reports nothing."""
    source = textwrap.dedent(
        """\
        import functools
        import torch

        @functools.lru_cache(maxsize=None)  # noqa: B019
        def load_embeddings(path):
            return torch.load(path, map_location="cpu")
        """
    )
    assert may_report(source, ast.parse(source), RULES) is True
    assert lint_text(source, "a.py", RULES, LOW).findings == []
    assert lint_text(source, "a.py", RULES, LOW, gate=False).findings == []


def test_syntax_the_builder_does_not_rebuild_goes_straight_to_libcst(libcst_parses):
    source = LEAKY_LOOP + "\nmatch total:\n    case 0:\n        pass\n"
    assert may_report(source, ast.parse(source), RULES) is True
    assert [f.code for f in lint_text(source, "train.py", RULES, Settings()).findings] == ["LL101"]
    assert libcst_parses == [source]


def test_a_failure_in_the_screen_leaves_the_decision_to_the_exact_run(monkeypatch):
    def broken(module):
        raise RuntimeError("a bug in the screen")

    monkeypatch.setattr("leaklint.analysis.facts.ModuleFacts", broken)
    assert may_report(CLEAN_LOOP, ast.parse(CLEAN_LOOP), RULES) is True


def test_the_screen_asks_only_the_rules_it_is_given():
    tree = ast.parse(LEAKY_LOOP)
    assert may_report(LEAKY_LOOP, tree, [all_rules()["LL101"]]) is True
    assert may_report(LEAKY_LOOP, tree, [all_rules()["LL301"]]) is False
    assert may_report(LEAKY_LOOP, tree, []) is False


def test_the_screen_module_stays_light():
    """Importing the screen must not import libcst: a file the gate rejects never pays for it."""
    assert "libcst" not in leaklint.screen.__dict__


def test_a_finding_below_the_confidence_asked_for_is_no_reason_to_parse(libcst_parses):
    """A name guess (``loss = compute(batch)``) is a low-confidence finding: at the default
    confidence the screen lets the file go; at ``low`` libcst parses it and it is reported."""
    source = "total = 0\nfor batch in loader:\n    loss = compute(batch)\n    total += loss\n"
    tree = ast.parse(source)
    assert may_report(source, tree, RULES, Confidence.MEDIUM) is False
    assert may_report(source, tree, RULES, Confidence.LOW) is True
    assert lint_text(source, "a.py", RULES, Settings()).findings == []
    assert libcst_parses == []
    [finding] = lint_text(source, "a.py", RULES, Settings(min_confidence=Confidence.LOW)).findings
    assert finding.code == "LL101" and libcst_parses == [source]


#: ``param`` only in a comment inside what the loop iterates: the screen's tree has no comments,
#: so a comment must not decide a finding (LL403's confidence once came from the code's text).
PARAM_ONLY_IN_A_COMMENT = """\
import torch


def train(model, loader, optimizer):
    for batch in loader:
        loss = model(batch).sum()
        loss.backward()
        optimizer.step()
        for p in (  # every param of the model
            model.layers()
        ):
            p.grad.zero_()
"""


@pytest.mark.parametrize("confidence", [Confidence.LOW, Confidence.MEDIUM])
def test_a_comment_decides_no_finding_screened_or_not(confidence):
    settings = Settings(min_confidence=confidence)
    screened = lint_text(PARAM_ONLY_IN_A_COMMENT, "train.py", RULES, settings)
    unscreened = lint_text(PARAM_ONLY_IN_A_COMMENT, "train.py", RULES, settings, gate=False)
    assert screened.findings == unscreened.findings
    expected = [("LL403", Confidence.LOW)] if confidence is Confidence.LOW else []
    assert [(f.code, f.confidence) for f in screened.findings] == expected
