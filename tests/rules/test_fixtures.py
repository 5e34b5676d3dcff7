"""Every fixture script and notebook is linted with every rule on; findings must match its
``# expect:`` comments exactly, both ways: nothing missing, nothing extra (in a notebook, in the
cell and at the line within it)."""

from __future__ import annotations

import pytest

from conftest import ROOT

from leaklint.config import Settings
from leaklint.engine import lint_file, lint_paths
from leaklint.project import with_project_facts
from leaklint.registry import all_rules
from leaklint.testing import expected_cell_findings, expected_findings, found_cell_triples, found_pairs

FIXTURES = sorted((ROOT / "fixtures").glob("*.py"))
NOTEBOOKS = sorted((ROOT / "fixtures").glob("*.ipynb"))
#: Projects of several modules, linted as one run: what one file tells about another.
PROJECTS = sorted(path for path in (ROOT / "fixtures").iterdir() if path.is_dir())


def test_there_are_enough_fixtures_of_both_kinds():
    names = [path.name for path in FIXTURES]
    assert len(names) >= 12
    assert sum(name.startswith("leaky_") for name in names) >= 6
    assert sum(name.startswith("clean_") for name in names) >= 6


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_fixture_findings_match_expectations(path):
    outcome = lint_file(str(path), list(all_rules().values()), Settings(select=("ALL",)))
    assert outcome.errors == []
    expected = expected_findings(path.read_text(encoding="utf-8"))
    found = found_pairs(outcome.findings)
    assert sorted(found - expected) == [], "unexpected findings (false positives)"
    assert sorted(expected - found) == [], "missing findings (false negatives)"
    if path.name.startswith("leaky_"):
        assert expected, "a leaky fixture must expect at least one finding"
    else:
        assert not expected, "a clean fixture must expect no finding"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_fixture_findings_match_expectations_cell_by_cell(path):
    outcome = lint_file(str(path), list(all_rules().values()), Settings(select=("ALL",)))
    assert outcome.errors == []
    expected = expected_cell_findings(path.read_text(encoding="utf-8"))
    found = found_cell_triples(outcome.findings)
    assert sorted(found - expected) == [], "unexpected findings (false positives)"
    assert sorted(expected - found) == [], "missing findings (false negatives)"
    if path.name.startswith("leaky_"):
        assert expected, "a leaky notebook must expect at least one finding"
    else:
        assert not expected, "a clean notebook must expect no finding"


@pytest.mark.parametrize("folder", PROJECTS, ids=lambda p: p.name)
def test_project_fixture_findings_match_expectations_file_by_file(folder):
    files = sorted(str(path) for path in folder.rglob("*.py"))
    settings = with_project_facts(Settings(select=("ALL",)), files)
    result, _ = lint_paths(files, list(all_rules().values()), settings)
    assert result.errors == ()
    expected = {(path, line, code) for path in files for line, code in expected_findings(open(path, encoding="utf-8").read())}
    found = {(finding.path, finding.line, finding.code) for finding in result.findings}
    assert sorted(found - expected) == [], "unexpected findings (false positives)"
    assert sorted(expected - found) == [], "missing findings (false negatives)"
    assert bool(expected) == folder.name.startswith("leaky_")


def test_there_are_projects_of_both_kinds():
    names = [path.name for path in PROJECTS]
    assert any(name.startswith("leaky_") for name in names) and any(name.startswith("clean_") for name in names)


def test_there_are_notebooks_of_both_kinds():
    names = [path.name for path in NOTEBOOKS]
    assert any(name.startswith("leaky_") for name in names) and any(name.startswith("clean_") for name in names)


@pytest.mark.parametrize("code", list(all_rules()))
def test_every_rule_is_demonstrated_by_a_leaky_fixture(code):
    demonstrated = {
        expected_code
        for path in FIXTURES
        if path.name.startswith("leaky_")
        for _, expected_code in expected_findings(path.read_text(encoding="utf-8"))
    }
    assert code in demonstrated, f"no leaky fixture expects {code}"
