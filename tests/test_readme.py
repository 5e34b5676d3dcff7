"""The README stays true: its rule table matches the registry, and CI runs its test command."""

from __future__ import annotations

import re

from conftest import ROOT

from leaklint.registry import all_rules
from leaklint.rules_table import rules_as_markdown

README = (ROOT / "README.md").read_text(encoding="utf-8")


def _between_markers() -> str:
    match = re.search(r"<!-- rules-table:start[^>]*-->\n(.*?)<!-- rules-table:end -->", README, re.S)
    assert match, "README.md lost its rules-table markers"
    return match.group(1)


def test_the_rule_table_matches_the_registry():
    assert _between_markers() == rules_as_markdown(all_rules()), (
        "README rule table is stale: paste the output of `leaklint rules --format markdown`"
    )


def _commands() -> list[str]:
    block = re.search(r"## Set up.*?```sh\n(.*?)```", README, re.S)
    assert block, "README.md lost its set-up block"
    return [line for line in block.group(1).splitlines() if line and not line.startswith("#")]


def test_readme_shows_the_two_setup_commands():
    install_and_lint, install_and_test = _commands()
    assert install_and_lint.startswith("pip install -e . && leaklint") and "fixtures/" in install_and_lint
    assert install_and_test.startswith("pip install -e '.[test]'") and "pytest" in install_and_test


def test_ci_runs_exactly_the_readme_test_command():
    ci_script = (ROOT / ".ci" / "run").read_text()
    test_command = _commands()[1]
    assert test_command in ci_script.splitlines()
