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


# --- the leak guard's example runs and prints what the README shows -------------------------------
SIZE = re.compile(r"(-?\d+(?:\.\d+)?) (B|KiB|MiB|GiB)")
UNITS = {"B": 1, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3}


def _guard_example() -> tuple[str, str]:
    match = re.search(r"<!-- guard-example:start[^>]*-->\n```python\n(.*?)```\n\n```text\n(.*?)```\n<!-- guard-example:end -->", README, re.S)
    assert match, "README.md lost its guard example (guard-example markers, a python block, then a text block)"
    return match.group(1), match.group(2)


def _same_shape(shown: str, printed: str) -> None:
    """Equal text, and every size within a factor of 2 (host bytes vary a little with the platform)."""
    assert SIZE.sub("<size>", shown) == SIZE.sub("<size>", printed), f"README shows:\n{shown}\nthe code prints:\n{printed}"
    for ours, theirs in zip(SIZE.findall(shown), SIZE.findall(printed)):
        a, b = float(ours[0]) * UNITS[ours[1]], float(theirs[0]) * UNITS[theirs[1]]
        assert abs(a - b) <= 64 or 0.5 <= a / b <= 2, f"README shows {ours}, the code prints {theirs}:\n{printed}"


def test_the_guard_example_prints_what_the_readme_shows(tmp_path):
    import subprocess
    import sys

    import pytest

    pytest.importorskip("torch")
    from leaklint.runtime.host_meter import HeapMeter

    if HeapMeter().unavailable():
        pytest.skip("the example's first message needs the host heap meter (glibc mallinfo2)")
    code, shown = _guard_example()
    assert code.startswith("# tests/test_train.py\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_train.py").write_text(code)
    # Call each test as pytest would and print its AssertionError, as pytest's report starts it.
    driver = (
        "import sys; sys.path.insert(0, 'tests'); import test_train\n"
        "for name, test in list(vars(test_train).items()):\n"
        "    if name.startswith('test_'):\n"
        "        try:\n"
        "            test()\n"
        "        except AssertionError as failure:\n"
        "            print(f'AssertionError: {failure}\\n')\n"
    )
    run = subprocess.run([sys.executable, "-c", driver], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    _same_shape(shown.rstrip("\n"), run.stdout.rstrip("\n"))
