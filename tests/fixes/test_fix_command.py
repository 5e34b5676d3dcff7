"""``leaklint --fix`` / ``--diff`` as users run them: what gets written, what is printed, exit codes."""

from __future__ import annotations

import json
import stat
import subprocess
import textwrap

import libcst as cst
import pytest
from conftest import CLEAN_LOOP, LEAKY_LOOP
from conftest import run_leaklint as run_leaklint_bytes

from leaklint.config import Settings
from leaklint.findings import Applicability, Confidence, Severity
from leaklint.fixes.command import _write
from leaklint.fixes.fixer import FileFixes, fix_text
from leaklint.fixes.spec import Replace, SuggestedFix
from leaklint.rule import Rule, Violation


def run_leaklint(*args: str, cwd, input: bytes | None = None) -> subprocess.CompletedProcess:
    """The command line, with standard output and error decoded."""
    result = run_leaklint_bytes(*args, cwd=cwd, input=input)
    return subprocess.CompletedProcess(result.args, result.returncode, result.stdout.decode(), result.stderr.decode())


EVALUATION = textwrap.dedent(
    """\
    from torch import nn


    def evaluate(model, loader):
        model.eval()
        correct = 0
        for x, y in loader:
            out = model(x)
            correct += (out.argmax(1) == y).sum().item()
        return correct
    """
)


def test_fix_applies_safe_fixes_and_exits_0_when_nothing_remains(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(LEAKY_LOOP)
    result = run_leaklint("--fix", "train.py", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert script.read_text() == LEAKY_LOOP.replace("total_loss += loss", "total_loss += loss.detach()")
    assert result.stdout.splitlines() == ["All checks passed!", "Fixed 1 finding in 1 file."]


def test_unsafe_fixes_wait_for_the_flag_and_the_exit_code_says_work_remains(tmp_path):
    script = tmp_path / "evaluate.py"
    script.write_text(EVALUATION)
    result = run_leaklint("--fix", "evaluate.py", cwd=tmp_path)
    assert result.returncode == 1
    assert script.read_text() == EVALUATION
    assert "fix (unsafe): Decorate 'evaluate' with @torch.no_grad()" in result.stdout
    assert "1 fixable with --unsafe-fixes" in result.stdout

    result = run_leaklint("--fix", "--unsafe-fixes", "evaluate.py", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert script.read_text() == EVALUATION.replace(
        "from torch import nn\n", "from torch import nn\nimport torch\n"
    ).replace("def evaluate", "@torch.no_grad()\ndef evaluate")


def test_diff_prints_a_patch_and_writes_nothing(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(LEAKY_LOOP)
    result = run_leaklint("--diff", "train.py", cwd=tmp_path)
    assert result.returncode == 1
    assert script.read_text() == LEAKY_LOOP
    assert "--- a/train.py\n+++ b/train.py\n" in result.stdout
    assert "-        total_loss += loss\n+        total_loss += loss.detach()\n" in result.stdout
    assert "Would fix 1 finding in 1 file." in result.stderr

    script.write_text(CLEAN_LOOP)
    result = run_leaklint("--diff", "train.py", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (0, "")


def test_a_second_fix_changes_nothing(tmp_path):
    script = tmp_path / "evaluate.py"
    script.write_text(EVALUATION + "\n" + LEAKY_LOOP.split("\n", 2)[2])
    run_leaklint("--fix", "--unsafe-fixes", "evaluate.py", cwd=tmp_path)
    once = script.read_bytes()
    result = run_leaklint("--fix", "--unsafe-fixes", "--diff", "evaluate.py", cwd=tmp_path)
    assert result.returncode == 2  # --fix and --diff together is a usage error
    result = run_leaklint("--diff", "--unsafe-fixes", "evaluate.py", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (0, "")
    assert script.read_bytes() == once


def test_crlf_line_endings_a_bom_and_the_file_mode_survive(tmp_path):
    script = tmp_path / "train.py"
    original = ("\ufeff" + LEAKY_LOOP.replace("\n", "\r\n")).encode("utf-8")
    script.write_bytes(original)
    script.chmod(0o751)
    result = run_leaklint("--fix", "train.py", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert script.read_bytes() == original.replace(b"total_loss += loss\r\n", b"total_loss += loss.detach()\r\n")
    assert stat.S_IMODE(script.stat().st_mode) == 0o751
    assert [p.name for p in tmp_path.iterdir()] == ["train.py"]  # no temporary file left behind


def test_a_declared_encoding_is_kept(tmp_path):
    script = tmp_path / "train.py"
    source = "# -*- coding: latin-1 -*-\n# Modèle: résumé\n" + LEAKY_LOOP
    script.write_bytes(source.encode("latin-1"))
    assert run_leaklint("--fix", "train.py", cwd=tmp_path).returncode == 0
    assert script.read_bytes() == source.replace("total_loss += loss\n", "total_loss += loss.detach()\n").encode("latin-1")


def test_fixing_standard_input_prints_the_fixed_source(tmp_path):
    result = run_leaklint("--fix", "-", cwd=tmp_path, input=LEAKY_LOOP.encode())
    assert result.returncode == 0
    assert result.stdout == LEAKY_LOOP.replace("total_loss += loss", "total_loss += loss.detach()")
    assert "All checks passed!" in result.stderr


def test_show_fixes_lists_what_was_applied(tmp_path):
    (tmp_path / "train.py").write_text(LEAKY_LOOP)
    result = run_leaklint("--fix", "--show-fixes", "train.py", cwd=tmp_path)
    line = LEAKY_LOOP.splitlines().index(next(l for l in LEAKY_LOOP.splitlines() if "total_loss += loss" in l)) + 1
    column = LEAKY_LOOP.splitlines()[line - 1].index("total_loss") + 1
    assert f"Fixed 1 finding:\ntrain.py:{line}:{column}: LL101 Detach 'loss' (safe)\n" in result.stdout


def test_show_fixes_gives_each_fix_where_it_is_in_the_fixed_file():
    from leaklint.fixes.command import _fix_listing

    source = "import torch\n\n\ndef evaluate(model, loader):\n" + LOOP_BODY + "\n\ndef validate(model, loader):\n" + LOOP_BODY
    outcome = fix_text(source, "e.py", [_rule("LL201")], Settings(), unsafe=True)
    assert outcome.fixed.count("@torch.no_grad()\n") == 2
    listing = _fix_listing([outcome]).splitlines()
    assert listing[0] == "Fixed 2 findings:"
    fixed_lines = outcome.fixed.splitlines()
    for entry, name in zip(listing[1:], ["evaluate", "validate"]):
        where, _, rest = entry.partition(": ")
        path, line, column = where.split(":")
        assert path == "e.py" and rest == f"LL201 Decorate '{name}' with @torch.no_grad() (unsafe)"
        assert fixed_lines[int(line) - 1][int(column) - 1 :].startswith("model(x)")


def test_other_files_are_fixed_when_one_cannot_be_parsed(tmp_path):
    (tmp_path / "broken.py").write_text("def broken(:\n")
    (tmp_path / "train.py").write_text(LEAKY_LOOP)
    result = run_leaklint("--fix", ".", cwd=tmp_path)
    assert result.returncode == 2
    assert "broken.py: error: syntax error" in result.stderr
    assert (tmp_path / "broken.py").read_text() == "def broken(:\n"
    assert "loss.detach()" in (tmp_path / "train.py").read_text()


def test_configuration_can_make_a_rule_unfixable_or_its_fixes_unsafe(tmp_path):
    (tmp_path / "train.py").write_text(LEAKY_LOOP)
    (tmp_path / "pyproject.toml").write_text('[tool.leaklint]\nunfixable = ["LL101"]\n')
    result = run_leaklint("--fix", "train.py", cwd=tmp_path)
    assert result.returncode == 1 and (tmp_path / "train.py").read_text() == LEAKY_LOOP

    (tmp_path / "pyproject.toml").write_text('[tool.leaklint]\nextend-unsafe-fixes = ["LL101"]\n')
    result = run_leaklint("--fix", "train.py", cwd=tmp_path)
    assert result.returncode == 1 and "fix (unsafe)" in result.stdout
    assert run_leaklint("--fix", "--unsafe-fixes", "train.py", cwd=tmp_path).returncode == 0


def test_fix_selectors_that_match_no_rule_are_errors_like_select(tmp_path):
    (tmp_path / "train.py").write_text(LEAKY_LOOP)
    (tmp_path / "pyproject.toml").write_text('[tool.leaklint]\nfixable = ["LL1"]\nextend-unsafe-fixes = ["LL101", "YY1"]\n')
    result = run_leaklint("--fix", "train.py", cwd=tmp_path)
    assert result.stderr == (
        "leaklint: error: pyproject.toml: [tool.leaklint] extend-unsafe-fixes: unknown rule 'YY1': "
        "no rule's code starts with it; 'leaklint rules' lists the rules\n"
    )
    assert result.returncode == 2 and (tmp_path / "train.py").read_text() == LEAKY_LOOP


def test_json_after_fix_reports_what_remains(tmp_path):
    (tmp_path / "evaluate.py").write_text(EVALUATION + "\n" + LEAKY_LOOP.split("\n", 2)[2])
    result = run_leaklint("--fix", "--format", "json", "evaluate.py", cwd=tmp_path)
    remaining = json.loads(result.stdout)
    assert [f["code"] for f in remaining] == ["LL201"]
    assert remaining[0]["fix"]["applicability"] == "unsafe"


def test_a_file_changed_on_disk_meanwhile_is_not_overwritten(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("edited by someone else\n")
    outcome = FileFixes(str(script), "train.py", original=LEAKY_LOOP, fixed=CLEAN_LOOP, data=LEAKY_LOOP.encode())
    problem = _write(outcome)
    assert problem is not None and "changed on disk" in problem.reason
    assert script.read_text() == "edited by someone else\n"


class BreaksTheFile(Rule):
    """A deliberately wrong fix: the fixer must refuse it rather than write broken code."""

    code = "XX901"
    name = "breaks-the-file"
    severity = Severity.PERF
    summary = help = docs = "test rule"

    def check(self, facts):  # type: ignore[no-untyped-def]
        for statement in facts.module.body:
            if isinstance(statement, cst.SimpleStatementLine):
                small = statement.body[0]
                yield Violation(small, "bad", Confidence.HIGH, fix=SuggestedFix("break", Applicability.SAFE, (Replace(small, "x = ("),)))


class MissesItsTarget(Rule):
    """A fix that leaves its finding in place (it edits the wrong node): must not be applied."""

    code = "XX902"
    name = "misses-its-target"
    severity = Severity.PERF
    summary = help = docs = "test rule"

    def check(self, facts):  # type: ignore[no-untyped-def]
        first, second = facts.module.body[:2]
        yield Violation(second.body[0], "bad", Confidence.HIGH, fix=SuggestedFix("wrong", Applicability.SAFE, (Replace(first.body[0], "a = 2"),)))


class OneGoodOneStuck(Rule):
    """Flags ``a = 1`` and ``b = <anything>``, both fixed by writing ``22`` for the value: the fix
    of ``a`` works, that of ``b`` leaves its finding. Same message, same replacement text."""

    code = "XX903"
    name = "one-good-one-stuck"
    severity = Severity.PERF
    summary = help = docs = "test rule"

    def check(self, facts):  # type: ignore[no-untyped-def]
        for statement in facts.module.body:
            small = statement.body[0]
            name = small.targets[0].target.value
            if name == "b" or (name == "a" and small.value.value == "1"):
                fix = SuggestedFix("twenty-two", Applicability.SAFE, (Replace(small.value, "22"),))
                yield Violation(small, "bad", Confidence.HIGH, fix=fix)


def test_a_refused_fix_does_not_block_the_same_fix_elsewhere_and_stays_refused_where_it_moves():
    outcome = fix_text("a = 1\nb = 1\n", "a.py", [OneGoodOneStuck], Settings(), unsafe=False)
    assert outcome.fixed == "a = 22\nb = 1\n"
    assert [f.line for f in outcome.applied] == [1]
    assert [e.reason for e in outcome.errors] == [
        "internal error: the XX903 fix at 2:1 did not remove the finding; not applied (please report this)"
    ]


def test_a_fix_that_does_not_remove_its_finding_is_refused_and_reported():
    outcome = fix_text("a = 1\nb = 1\n", "a.py", [MissesItsTarget], Settings(), unsafe=False)
    assert outcome.fixed == "a = 1\nb = 1\n" and outcome.applied == []
    assert "did not remove the finding" in outcome.errors[0].reason


def test_a_fix_that_would_not_compile_is_refused_and_reported():
    outcome = fix_text("a = 1\n", "a.py", [BreaksTheFile], Settings(), unsafe=False)
    assert outcome.fixed == "a = 1\n" and outcome.applied == []
    assert [e.rule for e in outcome.errors] == ["XX901"]
    assert "would not compile" in outcome.errors[0].reason


def fixed_with_unsafe(source: str) -> str:
    from leaklint.registry import all_rules

    return fix_text(textwrap.dedent(source), "e.py", list(all_rules().values()), Settings(), unsafe=True).fixed


def test_fixes_use_the_files_own_torch_alias():
    fixed = fixed_with_unsafe(EVALUATION.replace("from torch import nn", "import torch as th"))
    assert "@th.no_grad()\ndef evaluate" in fixed
    assert "import torch\n" not in fixed


def test_fixes_use_an_imported_no_grad_directly():
    fixed = fixed_with_unsafe(EVALUATION.replace("from torch import nn", "from torch import nn, no_grad"))
    assert "@no_grad()\ndef evaluate" in fixed
    assert "import torch\n" not in fixed


def test_the_added_import_goes_after_the_docstring_when_the_file_imports_nothing():
    source = '"""Evaluation."""\n' + EVALUATION.replace("from torch import nn\n", "")
    fixed = fixed_with_unsafe(source)
    assert fixed.startswith('"""Evaluation."""\nimport torch\n')
    assert "@torch.no_grad()\ndef evaluate" in fixed


def test_an_unrelated_local_torch_elsewhere_does_not_block_the_fix_or_hide_a_decorator():
    source = EVALUATION.replace("from torch import nn", "import torch") + "\n\ndef other():\n    torch = 3\n    return torch\n"
    outcome = fix_text(source, "e.py", [_rule("LL201")], Settings(), unsafe=True)
    assert outcome.errors == []
    assert "@torch.no_grad()\ndef evaluate" in outcome.fixed
    again = fix_text(outcome.fixed, "e.py", [_rule("LL201")], Settings(), unsafe=True)
    assert again.remaining == [] and again.errors == []  # the decorated function is not flagged


LOOP_BODY = "    model.eval()\n    for x, y in loader:\n        out = model(x)\n        print(out)\n"


@pytest.mark.parametrize(
    "function",
    [
        "def main(model, loader, torch):\n" + LOOP_BODY,
        "def run(model, loader):\n    for torch in range(3):\n" + textwrap.indent(LOOP_BODY, "    "),
        "def run2(model, loader):\n    import numpy as torch\n" + LOOP_BODY,
        "def run3(model, loader):\n" + LOOP_BODY + "    torch = None\n",
    ],
)
def test_no_fix_writes_torch_where_a_local_name_shadows_it(function):
    source = "import torch\n\n" + function
    compile(source, "s.py", "exec")
    outcome = fix_text(source, "s.py", [_rule("LL201")], Settings(), unsafe=True)
    assert outcome.errors == []
    assert outcome.fixed == source
    assert [f.fix for f in outcome.remaining] == [None]


def test_a_shadowed_alias_gives_way_to_another_module_level_alias():
    source = "import torch\nimport torch as th\n\ndef main(model, loader, torch):\n" + LOOP_BODY
    fixed = fixed_with_unsafe(source)
    assert "    with th.no_grad():\n        for x, y in loader:\n" in fixed


def test_a_decorator_runs_outside_the_function_so_a_parameter_named_torch_does_not_matter():
    source = "def evaluate(model, loader, torch):\n" + LOOP_BODY
    fixed = fixed_with_unsafe(source)
    assert fixed == "import torch\n@torch.no_grad()\n" + source


@pytest.mark.parametrize(
    "guard",
    [
        "try:\n    import torch as th\nexcept ImportError:\n    th = None\n",
        "import os\nif os.environ.get('X'):\n    import torch\n",
    ],
)
def test_an_optional_torch_import_is_never_made_unconditional(guard):
    source = guard + "\n\ndef main(model, loader):\n" + LOOP_BODY
    outcome = fix_text(source, "t.py", [_rule("LL201")], Settings(), unsafe=True)
    assert outcome.fixed == source and outcome.errors == []
    assert [f.fix for f in outcome.remaining] == [None]


def test_a_guarded_import_does_not_stop_the_fix_when_torch_is_required_anyway():
    source = "from typing import TYPE_CHECKING\nfrom torch import nn\nif TYPE_CHECKING:\n    import torch\n\n\ndef main(model, loader):\n" + LOOP_BODY
    fixed = fixed_with_unsafe(source)
    assert fixed.startswith("from typing import TYPE_CHECKING\nfrom torch import nn\nimport torch\n")
    assert "    with torch.no_grad():\n" in fixed


def test_an_optional_alias_is_used_where_the_code_already_calls_through_it():
    source = (
        "try:\n    import torch as th\nexcept ImportError:\n    th = None\n\n\n"
        "def main(model, loader):\n    model.eval()\n    for x in loader:\n        print(model(th.as_tensor(x)))\n"
    )
    fixed = fixed_with_unsafe(source)
    assert "    with th.no_grad():\n        for x in loader:\n" in fixed
    assert "import torch\n" not in fixed


def _rule(code: str):
    from leaklint.registry import all_rules

    return all_rules()[code]


def test_an_import_and_a_decorator_at_the_same_point_are_one_replacement():
    from leaklint.engine import lint_text
    from leaklint.findings import LintResult
    from leaklint.report import ReportOptions, render

    source = "def evaluate(model, loader):\n" + LOOP_BODY
    [finding] = lint_text(source, "e.py", [_rule("LL201")], Settings()).findings
    [edit] = finding.fix.edits
    assert (edit.start, edit.end, edit.replacement) == (0, 0, "import torch\n@torch.no_grad()\n")
    sarif = json.loads(render("sarif", LintResult((finding,), (), 1), {"LL201": _rule("LL201")}, ReportOptions(sources={"e.py": source})))
    [fix] = sarif["runs"][0]["results"][0]["fixes"]
    [change] = fix["artifactChanges"]
    assert [r["insertedContent"]["text"] for r in change["replacements"]] == ["import torch\n@torch.no_grad()\n"]
    assert fixed_with_unsafe(source) == "import torch\n@torch.no_grad()\n" + source
