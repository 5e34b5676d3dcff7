"""Every rule's own examples: each INVALID snippet is flagged exactly where its ``# expect:``
comments say, and each VALID snippet is clean (of that rule)."""

from __future__ import annotations

import textwrap

import pytest

from leaklint.registry import all_rules
from leaklint.testing import expected_findings, found_pairs, lint_snippet

CASES = [
    pytest.param(rule, kind, index, snippet, id=f"{code}-{kind}-{index}")
    for code, rule in all_rules().items()
    for kind, snippets in (("valid", rule.VALID), ("invalid", rule.INVALID))
    for index, snippet in enumerate(snippets)
]


@pytest.mark.parametrize("rule, kind, index, snippet", CASES)
def test_rule_example(rule, kind, index, snippet):
    source = textwrap.dedent(snippet)
    findings, errors = lint_snippet(source, [rule])
    assert errors == []
    expected = expected_findings(source) if kind == "invalid" else set()
    if kind == "invalid":
        assert expected, "an INVALID example must mark at least one line with '# expect:'"
    assert found_pairs(findings) == {pair for pair in expected if pair[1] == rule.code}


@pytest.mark.parametrize("code, rule", list(all_rules().items()))
def test_every_rule_has_examples_of_both_kinds(code, rule):
    assert len(rule.VALID) >= 2 and len(rule.INVALID) >= 2


@pytest.mark.parametrize("code, rule", list(all_rules().items()))
def test_every_finding_has_a_confidence_and_help(code, rule):
    for snippet in rule.INVALID:
        findings, _ = lint_snippet(snippet, [rule])
        for finding in findings:
            assert finding.confidence is not None
            assert finding.help
