"""What a run imports: only what the command and the files need (issue 6's start-up goal).

libcst costs about 0.2 s to import, more than Python's own start and the rest of leaklint together,
so a run in which the gate rejects every file must never import it; ``importlib.metadata`` (plugin
rules), the result cache and the process pool are skipped when nothing needs them. Each test runs
the command line in a fresh interpreter and reads ``sys.modules`` at the end: no timing, so the
tests fail only when an import comes back.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

from conftest import CLEAN_LOOP, LEAKY_LOOP

from leaklint.registry import ENTRY_POINT_GROUP, may_declare_plugins

# Runs the command line in this interpreter, then reports what was imported beyond a bare start.
RUN_CLI = """
import json, sys
before = set(sys.modules)
from leaklint.cli import run
try:
    code = run(sys.argv[1:], standalone_mode=False) or 0
except SystemExit as done:
    code = done.code
print(json.dumps({"exit": code, "imported": sorted(set(sys.modules) - before)}))
"""

# No loop, no training step: the gate rejects it for every rule (above low confidence, where some
# rules need only a torch word).
PLAIN_MODULE = textwrap.dedent(
    """\
    import torch

    def scale(x: torch.Tensor, factor: float) -> torch.Tensor:
        return x * factor
    """
)


def run_cli(*args: str, cwd: Path, pythonpath: str | None = None) -> tuple[int, set[str], str]:
    env = None
    if pythonpath is not None:
        import os

        env = {**os.environ, "PYTHONPATH": pythonpath}
    done = subprocess.run(
        [sys.executable, "-c", RUN_CLI, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )
    *output, report = done.stdout.strip().splitlines()
    result = json.loads(report)
    return result["exit"], set(result["imported"]), "\n".join(output)


def roots(modules: set[str]) -> set[str]:
    return {name.split(".")[0] for name in modules}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.leaklint]\n")
    (tmp_path / "plain.py").write_text(PLAIN_MODULE)
    (tmp_path / "notes.py").write_text("def greet(name):\n    return f'hello {name}'\n")
    (tmp_path / "train.py").write_text(LEAKY_LOOP)
    return tmp_path


@pytest.mark.parametrize(
    "args",
    [
        ["plain.py"],
        ["--select", "ALL", "plain.py", "notes.py"],
        ["--select", "ALL", "--min-confidence", "low", "notes.py"],  # mentions no torch word at all
    ],
)
def test_files_the_gate_rejects_never_import_libcst(project: Path, args: list[str]) -> None:
    code, imported, output = run_cli("--no-cache", *args, cwd=project)
    assert code == 0, output
    assert "libcst" not in roots(imported)
    light = {"leaklint.analysis.torch_api", "leaklint.analysis.family"}  # names, and the node family's choice
    assert not {name for name in imported if name.startswith("leaklint.analysis.") and name not in light}
    assert not {name for name in imported if name.startswith("leaklint.rules.checks")}
    assert "torch" not in roots(imported)


def test_a_one_file_run_imports_no_plugin_machinery_cache_or_process_pool(project: Path) -> None:
    code, imported, output = run_cli("--no-cache", "plain.py", cwd=project)
    assert code == 0, output
    # No distribution declares leaklint.rules here: importlib.metadata is never needed.
    assert "importlib.metadata" not in imported
    assert "leaklint.cache" not in imported
    assert "concurrent.futures.process" not in imported and "multiprocessing" not in roots(imported)


def test_a_file_that_needs_the_analysis_still_gets_its_findings(project: Path) -> None:
    code, imported, output = run_cli("--no-cache", "train.py", "plain.py", cwd=project)
    assert code == 1
    assert "train.py:10:9: LL101" in output
    assert "libcst" in roots(imported)  # the gate test above is not vacuous
    # Only the detectors of rules that the gate lets through for train.py are imported.
    assert "leaklint.rules.checks.ll101_loss_accumulation" in imported
    assert "leaklint.rules.checks.ll501_keras_predict_in_loop" not in imported
    assert "torch" not in roots(imported)


def test_a_file_the_screen_clears_never_imports_libcst(project: Path) -> None:
    """A training loop the gate lets through but no rule fires in: the screen runs the rules on
    the node mirror, so libcst is never imported (the start-up goal for a one-file lint)."""
    (project / "clean.py").write_text(CLEAN_LOOP)
    code, imported, output = run_cli("--no-cache", "clean.py", cwd=project)
    assert code == 0, output
    assert "leaklint.rules.checks.ll101_loss_accumulation" in imported  # the rules did run
    assert "libcst" not in roots(imported)


@pytest.mark.parametrize("command", [["rules"], ["rules", "--format", "json"], ["rule", "LL101"], ["--version"]])
def test_documentation_commands_never_import_libcst(project: Path, command: list[str]) -> None:
    code, imported, output = run_cli(*command, cwd=project)
    assert code == 0, output
    assert not roots(imported) & {"libcst", "torch"}


# --- plugin rules ---------------------------------------------------------------------------------
PLUGIN_RULE = textwrap.dedent(
    '''\
    from leaklint.findings import Severity
    from leaklint.rule import DOC_SECTIONS, Rule


    class DemoRule(Rule):
        code = "XYZ901"
        name = "demo-rule"
        severity = Severity.PERF
        summary = "A rule from a third-party pack."
        help = "nothing to do"
        docs = "".join(f"## {section}\\ntext\\n" for section in DOC_SECTIONS)

        def check(self, facts):
            return iter(())
    '''
)


def install_fake_distribution(site: Path, entry_points: str | None) -> None:
    """A distribution as pip leaves it in site-packages: a module and its ``.dist-info``."""
    site.mkdir(parents=True, exist_ok=True)
    (site / "demo_leaklint_pack.py").write_text(PLUGIN_RULE)
    info = site / "demo_leaklint_pack-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: demo-leaklint-pack\nVersion: 1.0\n")
    if entry_points is not None:
        (info / "entry_points.txt").write_text(entry_points)


def test_a_rule_pack_registered_by_entry_point_is_found(project: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    install_fake_distribution(site, f"[{ENTRY_POINT_GROUP}]\ndemo = demo_leaklint_pack\n")
    code, imported, output = run_cli("rules", cwd=project, pythonpath=str(site))
    assert code == 0, output
    assert "XYZ901" in output and "demo-rule" in output
    assert "importlib.metadata" in imported

    code, _, output = run_cli("--no-cache", "--select", "XYZ901", "plain.py", cwd=project, pythonpath=str(site))
    assert code == 0, output


TREE_REPORTING_RULE = PLUGIN_RULE.replace(
    "        return iter(())",
    "        from leaklint.rule import Violation\n"
    "        from leaklint.findings import Confidence\n"
    "        yield Violation(node=facts.module.body[0], message=type(facts.module).__module__, confidence=Confidence.HIGH)",
)


def test_plugin_rules_are_given_libcsts_trees(project: Path, tmp_path: Path) -> None:
    """Plugin rules were written against libcst: with one installed, the command analyses with
    libcst's classes rather than the mirror."""
    site = tmp_path / "site"
    install_fake_distribution(site, f"[{ENTRY_POINT_GROUP}]\ndemo = demo_leaklint_pack\n")
    (site / "demo_leaklint_pack.py").write_text(TREE_REPORTING_RULE)
    code, _, output = run_cli("--no-cache", "--select", "XYZ901", "train.py", cwd=project, pythonpath=str(site))
    assert code == 1, output
    assert "XYZ901 [perf, high confidence] libcst._nodes.module" in output


def test_the_plugin_prescan_says_no_only_when_no_distribution_declares_the_group(tmp_path: Path) -> None:
    none_declared = tmp_path / "plain-site"
    install_fake_distribution(none_declared, "[console_scripts]\ndemo = demo_leaklint_pack:main\n")
    no_entry_points = tmp_path / "bare-site"
    install_fake_distribution(no_entry_points, None)
    assert may_declare_plugins([str(none_declared), str(no_entry_points), str(tmp_path / "missing")]) is False

    declared = tmp_path / "pack-site"
    install_fake_distribution(declared, f"[{ENTRY_POINT_GROUP}]\ndemo = demo_leaklint_pack\n")
    assert may_declare_plugins([str(none_declared), str(declared)]) is True

    # An egg directory keeps its metadata in EGG-INFO.
    egg = tmp_path / "demo_leaklint_pack-1.0-py3.11.egg"
    (egg / "EGG-INFO").mkdir(parents=True)
    (egg / "EGG-INFO" / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\ndemo = demo_leaklint_pack\n")
    assert may_declare_plugins([str(egg)]) is True

    # What the prescan does not read itself is a "maybe": importlib.metadata decides.
    archive = tmp_path / "pack.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("demo_leaklint_pack.py", PLUGIN_RULE)
    assert may_declare_plugins([str(archive)]) is True
