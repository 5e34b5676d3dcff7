"""What a run imports: only what the command and the files need.

``leaklint --version`` imports neither the rules nor libcst; no command imports torch; a one-file
run starts no process pool and, with ``--no-cache``, never touches the result cache; rule packs
registered by entry point are found. Each test runs the command line in a fresh interpreter and
reads ``sys.modules`` at the end: no timing, so the tests fail only when an import comes back.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import LEAKY_LOOP

from leaklint.registry import ENTRY_POINT_GROUP

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


def test_a_one_file_run_imports_no_cache_or_process_pool(project: Path) -> None:
    code, imported, output = run_cli("--no-cache", "plain.py", cwd=project)
    assert code == 0, output
    assert "leaklint.cache" not in imported
    assert "concurrent.futures.process" not in imported and "multiprocessing" not in roots(imported)


def test_without_a_rule_pack_installed_the_entry_point_machinery_is_not_imported(project: Path) -> None:
    """importlib.metadata costs a tenth of a one-file run; a look at the metadata folders shows
    that no installed distribution declares a rule pack."""
    code, imported, output = run_cli("--no-cache", "train.py", cwd=project)
    assert code == 1, output
    assert "importlib.metadata" not in imported


def test_a_file_with_findings_imports_no_torch(project: Path) -> None:
    code, imported, output = run_cli("--no-cache", "train.py", "plain.py", cwd=project)
    assert code == 1
    assert "train.py:10:9: LL101" in output
    assert "torch" not in roots(imported)


def test_the_version_imports_neither_the_rules_nor_libcst(project: Path) -> None:
    code, imported, output = run_cli("--version", cwd=project)
    assert code == 0, output
    assert not roots(imported) & {"libcst", "torch"}
    assert not {name for name in imported if name.startswith("leaklint.rules")}


@pytest.mark.parametrize("command", [["rules"], ["rules", "--format", "json"], ["rule", "LL101"]])
def test_documentation_commands_never_import_torch(project: Path, command: list[str]) -> None:
    code, imported, output = run_cli(*command, cwd=project)
    assert code == 0, output
    assert "torch" not in roots(imported)


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
    site = tmp_path / "site"
    install_fake_distribution(site, f"[{ENTRY_POINT_GROUP}]\ndemo = demo_leaklint_pack\n")
    (site / "demo_leaklint_pack.py").write_text(TREE_REPORTING_RULE)
    code, _, output = run_cli("--no-cache", "--select", "XYZ901", "train.py", cwd=project, pythonpath=str(site))
    assert code == 1, output
    assert "XYZ901 [perf, high confidence] libcst._nodes.module" in output
