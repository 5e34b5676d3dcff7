"""What a user gets from ``pip install leaklint-ml``, and what importing it costs.

* The distribution is ``leaklint-ml`` (``leaklint`` on PyPI is an unrelated project); the command
  and the import package are ``leaklint``. Its ``runtime`` extra never requires torch (without
  torch installed, pip would fetch a multi-GB CUDA build, even on a CPU-only machine).

* The wheel carries every module of the source tree (``rules/`` installs as ``leaklint.rules``),
  nothing else, and works from a fresh virtual environment: the ``leaklint`` script,
  ``python -m leaklint`` and the rule imports.
* The static linter never imports torch, even when torch is installed.
* ``import leaklint`` and ``leaklint --version`` load neither libcst nor torch.

These tests build real artefacts (a wheel, a virtual environment) and need PyPI for the build
backend and for libcst and click.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

from conftest import LEAKY_LOOP, ROOT

# What a clean clone does not have: the developer's virtual environment and build output.
NOT_SOURCE = shutil.ignore_patterns(
    ".git", ".venv*", "build", "dist", "*.egg-info", "__pycache__", "*.py[cod]",
    ".pytest_cache", ".leaklint_cache", ".mypy_cache", ".ruff_cache",
)


def clean_env(**extra: str) -> dict[str, str]:
    """The test's environment, minus anything that would let a subprocess see the repository."""
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "FORCE_COLOR"}}
    return {**env, "NO_COLOR": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1", **extra}


def run(*cmd: str | Path, cwd: Path, env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in cmd], cwd=cwd, env=env or clean_env(), capture_output=True, text=True, timeout=timeout)


def ok(result: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert result.returncode == 0, f"{result.args} exited {result.returncode}\n{result.stdout}\n{result.stderr}"
    return result


#: The distribution name, as pip spells it and as wheel file names normalise it.
DISTRIBUTION = "leaklint-ml"
WHEEL_NAME = "leaklint_ml"


def build_wheel(tmp_path: Path) -> Path:
    """``pip wheel`` a copy of the source tree, as ``pip install .`` would build it.

    A copy, because setuptools builds in-tree (``build/``, ``*.egg-info``), and a stale ``build/lib``
    in the repository would leak deleted modules into the wheel. Build isolation installs the
    ``[build-system] requires`` from PyPI, so that declaration is checked too (and it does not
    depend on the dev venv's setuptools having ``bdist_wheel``).
    """
    source = tmp_path / "source"
    shutil.copytree(ROOT, source, ignore=NOT_SOURCE)
    dist = tmp_path / "dist"
    ok(run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--wheel-dir", dist, source, cwd=tmp_path))
    (wheel,) = dist.glob(f"{WHEEL_NAME}-*.whl")
    return wheel


def modules_in_source_tree(source: Path) -> set[str]:
    """Where each module of the source tree belongs in the wheel: ``rules/x.py`` is ``leaklint/rules/x.py``."""
    return {
        *(f"leaklint/{p.relative_to(source / 'leaklint').as_posix()}" for p in (source / "leaklint").rglob("*.py")),
        *(f"leaklint/rules/{p.relative_to(source / 'rules').as_posix()}" for p in (source / "rules").rglob("*.py")),
    }


@pytest.mark.slow
def test_the_wheel_carries_the_rules_and_runs(tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path)
    version = wheel.name.split("-")[1]
    files = set(zipfile.ZipFile(wheel).namelist())

    # Every module of the source tree is in the wheel: a subpackage missing from
    # [tool.setuptools] packages would be silently left out.
    assert {"leaklint/cli.py", "leaklint/__main__.py", "leaklint/rules/ll101_loss_accumulation.py"} <= files
    assert modules_in_source_tree(tmp_path / "source") <= files
    # One top-level package and its metadata: no tests/, fixtures/, bench/, no top-level rules/.
    assert {name.split("/")[0] for name in files} == {"leaklint", f"{WHEEL_NAME}-{version}.dist-info"}
    metadata = zipfile.ZipFile(wheel).read(f"{WHEEL_NAME}-{version}.dist-info/METADATA").decode()
    assert f"Name: {DISTRIBUTION}\n" in metadata
    runtime = [line for line in metadata.splitlines() if line.startswith("Requires-Dist:") and "extra == \"runtime\"" in line]
    assert runtime and not [line for line in runtime if "torch" in line], runtime

    # A fresh environment that sees only the wheel and its dependencies from PyPI.
    venv = tmp_path / "venv"
    ok(run(sys.executable, "-m", "venv", venv, cwd=tmp_path))
    bin_dir = venv / ("Scripts" if os.name == "nt" else "bin")
    python, leaklint = bin_dir / "python", bin_dir / "leaklint"
    ok(run(python, "-m", "pip", "install", wheel, cwd=tmp_path))

    # A user's project, far from the repository.
    project = tmp_path / "elsewhere"
    project.mkdir()
    (project / "pyproject.toml").write_text("[tool.leaklint]\n")
    (project / "train.py").write_text(LEAKY_LOOP)

    lint = run(leaklint, "train.py", cwd=project)
    assert lint.returncode == 1, lint.stderr
    assert "train.py:10:9: LL101" in lint.stdout

    assert ok(run(python, "-m", "leaklint", "--version", cwd=project)).stdout.strip() == f"leaklint {version}"
    installed = ok(run(python, "-c", f"import importlib.metadata as m; print(m.version({DISTRIBUTION!r}))", cwd=project))
    assert installed.stdout.strip() == version
    # The advice leaklint's messages give, run where leaklint-ml is installed: the extra's
    # packages come from the installed metadata, and torch is not among them.
    plan = ok(run(python, "-m", "pip", "install", "--dry-run", f"{DISTRIBUTION}[runtime]", cwd=project)).stdout
    would_install = next(line for line in plan.splitlines() if line.startswith("Would install"))
    assert {"psutil", "numpy", "matplotlib"} <= {name.rsplit("-", 1)[0] for name in would_install.split()[2:]}, plan
    assert "torch" not in would_install and DISTRIBUTION not in would_install, plan

    imported = ok(run(python, "-c", "import leaklint.rules, leaklint.rules.ll101_loss_accumulation as m; print(m.__file__)", cwd=project))
    assert Path(imported.stdout.strip()).resolve().is_relative_to(venv.resolve()), "imported from outside the venv"

    assert "LL101" in ok(run(leaklint, "rules", cwd=project)).stdout


# --- every install command names the distribution ------------------------------------------------
WRONG_EXTRA = re.compile(r"(?<![-\w])leaklint\[")  # 'leaklint[runtime]': the unrelated project's name
WRONG_INSTALL = re.compile(r"pip install +['\"]?leaklint(?![-\w])")


def texts_users_read() -> dict[str, str]:
    """The README, the hook definitions and every module (messages, docstrings, rule pages)."""
    files = [ROOT / "README.md", ROOT / ".pre-commit-hooks.yaml", ROOT / "pyproject.toml"]
    files += sorted((ROOT / "leaklint").rglob("*.py")) + sorted((ROOT / "rules").rglob("*.py"))
    return {str(path.relative_to(ROOT)): path.read_text(encoding="utf-8") for path in files}


def test_install_commands_name_leaklint_ml_not_the_unrelated_leaklint() -> None:
    wrong = [
        f"{name}: {line.strip()}"
        for name, content in texts_users_read().items()
        for line in content.splitlines()
        if WRONG_EXTRA.search(line) or (WRONG_INSTALL.search(line) and "unrelated project" not in line)
    ]
    assert wrong == []
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert 'pip install "leaklint-ml @ git+https://github.com/leaklint/leaklint"' in readme
    assert "pip install .  " in readme


BARE_TORCH_INSTALL = re.compile(r"pip install +(?:--(?:upgrade|force-reinstall) +)?['\"]?torch\b(?![^\n]*--index-url)")


def test_every_torch_install_command_names_the_cpu_wheel_index() -> None:
    """A plain 'pip install torch' pulls a multi-GB CUDA build on Linux, even on a CPU-only machine:
    every command we show names the index (IPython's '!pip install torch', an example of masked
    notebook syntax, is no advice)."""
    wrong = [
        f"{name}: {line.strip()}"
        for name, content in texts_users_read().items()
        for line in content.splitlines()
        if BARE_TORCH_INSTALL.search(line) and "!pip install torch" not in line and "automagics" not in line
    ]
    assert wrong == []


# A stand-in torch that records who imported it. It shadows a real torch (PYTHONPATH comes before
# site-packages), so the check means the same whether or not torch is installed, and it catches
# guarded imports (try: import torch / except ImportError) too.
FAKE_TORCH = """\
import os, traceback
with open(os.environ["TORCH_IMPORT_LOG"], "a") as log:
    log.write("".join(traceback.format_stack()) + "\\n")
"""


@pytest.fixture
def torch_tripwire(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """An environment in which importing torch leaves a stack trace in the returned log file."""
    fake = tmp_path / "fake-torch"
    (fake / "torch").mkdir(parents=True)
    (fake / "torch" / "__init__.py").write_text(FAKE_TORCH)
    log = tmp_path / "torch-imports.log"
    pythonpath = os.pathsep.join(filter(None, [str(fake), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": pythonpath, "TORCH_IMPORT_LOG": str(log), "NO_COLOR": "1"}
    env.pop("FORCE_COLOR", None)
    return env, log


TORCH_HEAVY = LEAKY_LOOP + textwrap.dedent(
    """\

    import torch.nn as nn
    import torch.nn.functional as F
    from torch.utils.data import DataLoader

    def evaluate(model: nn.Module, loader: DataLoader):
        model.eval()
        outputs = []
        for x, _ in loader:
            outputs.append(F.softmax(model(x), dim=-1))
        torch.cuda.empty_cache()
        return torch.cat(outputs)
    """
)

LINT_EVERYTHING = """\
import json, sys
import leaklint
from leaklint.cli import main
from leaklint.config import Settings
from leaklint.engine import lint_text
from leaklint.registry import all_rules

source_file, result_file = sys.argv[1:]
with open(source_file) as f:
    outcome = lint_text(f.read(), "train.py", list(all_rules().values()), Settings())

commands = {
    "text": [source_file],
    **{fmt: [source_file, "--format", fmt] for fmt in ("json", "github", "sarif")},
    "rules": ["rules"],
    "rule LL101": ["rule", "LL101"],
}
exits = {}
for name, args in commands.items():
    try:
        exits[name] = main(args, standalone_mode=False) or 0
    except SystemExit as done:
        exits[name] = done.code

with open(result_file, "w") as f:
    json.dump({"codes": sorted({x.code for x in outcome.findings}), "exits": exits, "torch": "torch" in sys.modules}, f)
"""


@pytest.mark.slow
def test_linting_never_imports_torch(tmp_path: Path, torch_tripwire: tuple[dict[str, str], Path]) -> None:
    env, log = torch_tripwire
    # The tripwire works: a plain import of torch is recorded.
    ok(run(sys.executable, "-c", "import torch", cwd=tmp_path, env=env))
    assert log.read_text().strip()
    log.unlink()

    (tmp_path / "pyproject.toml").write_text("[tool.leaklint]\n")
    (tmp_path / "train.py").write_text(TORCH_HEAVY)
    ok(run(sys.executable, "-c", LINT_EVERYTHING, "train.py", "result.json", cwd=tmp_path, env=env))
    result = json.loads((tmp_path / "result.json").read_text())

    # The lint really ran, through the engine and through every command of the CLI ...
    assert "LL101" in result["codes"]
    assert result["exits"] == {"text": 1, "json": 1, "github": 1, "sarif": 1, "rules": 0, "rule LL101": 0}
    # ... and nothing imported torch.
    assert not log.exists(), f"leaklint imported torch:\n{log.read_text()}"
    assert result["torch"] is False


@pytest.mark.slow
def test_import_leaklint_is_light(tmp_path: Path, torch_tripwire: tuple[dict[str, str], Path]) -> None:
    """pre-commit starts leaklint on every commit: the package and --version load no heavy module."""
    env, log = torch_tripwire
    heavy = "sorted(m for m in sys.modules if m.split('.')[0] in ('libcst', 'torch'))"
    loaded = ok(run(sys.executable, "-c", f"import sys, leaklint; print({heavy})", cwd=tmp_path, env=env))
    assert loaded.stdout.strip() == "[]"

    # -X importtime lists every module the interpreter imports, on stderr.
    version = ok(run(sys.executable, "-X", "importtime", "-m", "leaklint", "--version", cwd=tmp_path, env=env))
    imported = {line.rsplit("|", 1)[-1].strip() for line in version.stderr.splitlines() if line.startswith("import time:")}
    assert "leaklint.cli" in imported
    assert not {m for m in imported if m.split(".")[0] in ("libcst", "torch")}
    assert not log.exists()
