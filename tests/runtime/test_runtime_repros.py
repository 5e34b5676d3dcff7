"""Every rule's repro shows what the rule claims: growth for a leak, a higher peak for a peak
rule, a slower step for a perf rule, three runs in a row (CPU, real torch)."""

from __future__ import annotations

import pytest

from leaklint.findings import Severity
from leaklint.registry import all_rules

RULES = all_rules()
#: Rules whose repro runs TensorFlow, which CI does not install (bench/RESULTS.md has their figures).
TENSORFLOW_RULES = tuple(code for code, rule in RULES.items() if rule.has_repro() and "tensorflow" in rule.Repro.requires)
#: Rules about leaklint's own comments: nothing happens at run time, so there is nothing to measure.
NO_RUNTIME = {code for code, rule in RULES.items() if rule.severity is Severity.HYGIENE}


def test_every_rule_carries_a_repro_with_a_leaky_and_a_fixed_step():
    for code, rule in RULES.items():
        if code in NO_RUNTIME:
            assert not rule.has_repro(), f"{code} claims no run-time cost, yet has a repro"
            continue
        assert rule.has_repro(), f"{code} has no runtime repro"
        assert rule.Repro.leaky is not rule.Repro.__mro__[1].leaky, code
        assert rule.Repro.fixed is not rule.Repro.__mro__[1].fixed, code


def test_the_rule_page_shows_the_repro_and_how_to_run_it():
    page = RULES["LL103"].doc_page()
    assert "## Runtime repro" in page
    assert "`leaklint verify LL103`" in page
    assert "ctx.state = tuple(s.detach() for s in ctx.state)" in page  # the fix, in the shown source


@pytest.mark.slow
@pytest.mark.parametrize("code", [c for c in RULES if c not in TENSORFLOW_RULES and c not in NO_RUNTIME])
def test_the_repro_confirms_the_rules_severity_three_times_in_a_row(code):
    pytest.importorskip("torch")
    from leaklint.runtime.driver import CONFIRMED, verify_rules
    from leaklint.runtime.verdict import PROVES

    rule = RULES[code]
    if rule.Repro.missing():
        pytest.skip(f"{', '.join(rule.Repro.missing())} not installed")
    results = verify_rules([rule] * 3, device="cpu")
    for result in results:
        assert result.status == CONFIRMED, f"{code}: {result.verdict} ({result.reason})"
        assert result.verdict in PROVES[rule.severity]


@pytest.mark.parametrize("code", TENSORFLOW_RULES)
def test_tensorflow_rules_are_skipped_without_tensorflow(code):
    pytest.importorskip("torch")
    from leaklint.runtime.driver import SKIPPED, verify_rule

    if not RULES[code].Repro.missing():
        pytest.skip("tensorflow is installed")
    result = verify_rule(RULES[code], "cpu")
    assert (result.status, result.reason, result.failed) == (SKIPPED, "tensorflow not installed", False)
