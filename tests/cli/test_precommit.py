"""The pre-commit hook, configured exactly as the README shows, in a user's git repository.

pre-commit clones the hook repository at ``rev``, builds a virtualenv, pip-installs leaklint into
it (libcst and click come from PyPI) and runs ``.pre-commit-hooks.yaml``'s entry on the staged
Python files. The hook repository here is a snapshot of the working tree, committed and tagged
like a release, so the tests check the code as it is now (uncommitted and new files included).

The two cases a new user meets first run through ``pre-commit try-repo`` (the command hook
authors document for trying a hook); the others use a real ``.pre-commit-config.yaml`` and one
shared ``PRE_COMMIT_HOME``, so their environment is built once for the module (``try-repo`` builds
its own in a throw-away store every time).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import CLEAN_LOOP, LEAKY_LOOP, ROOT
from leaklint import __version__

# What a clean clone does not have: the developer's virtual environment and build output.
NOT_SOURCE = shutil.ignore_patterns(
    ".git", ".venv*", "build", "dist", "*.egg-info", "__pycache__", "*.py[cod]",
    ".pytest_cache", ".leaklint_cache", ".mypy_cache", ".ruff_cache",
)

if shutil.which("git") is None:
    pytest.skip("pre-commit needs git", allow_module_level=True)


def environment(pre_commit_home: Path | None = None) -> dict[str, str]:
    """The test's environment without the settings of whatever git repository or hook runs pytest."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PRE_COMMIT")) and k not in {"SKIP", "PYTHONPATH", "VIRTUAL_ENV", "FORCE_COLOR"}}
    env.update(NO_COLOR="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    if pre_commit_home:
        env["PRE_COMMIT_HOME"] = str(pre_commit_home)
    return env


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, env=environment(), check=True, capture_output=True, timeout=60)


def commit_all(repo: Path) -> None:
    """``git init`` (if needed) and commit everything in ``repo``, with a local identity."""
    if not (repo / ".git").exists():
        git("init", "--quiet", cwd=repo)
        git("config", "user.name", "leaklint tests", cwd=repo)
        git("config", "user.email", "tests@leaklint.invalid", cwd=repo)
        git("config", "commit.gpgsign", "false", cwd=repo)
        git("config", "tag.gpgsign", "false", cwd=repo)
    git("add", "--all", cwd=repo)
    git("commit", "--quiet", "--message", "snapshot", cwd=repo)


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The working tree committed and tagged ``v<version>``, as the README's ``rev`` expects."""
    repo = tmp_path_factory.mktemp("hook-repo") / "leaklint"
    shutil.copytree(ROOT, repo, ignore=NOT_SOURCE)
    commit_all(repo)
    git("tag", f"v{__version__}", cwd=repo)
    return repo


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One pre-commit cache for the module: the hook's virtualenv is built by the first test only."""
    return tmp_path_factory.mktemp("pre-commit-home")


README = (ROOT / "README.md").read_text(encoding="utf-8")
FIXED_LOOP = LEAKY_LOOP.replace("total_loss += loss", "total_loss += loss.detach()")


def readme_config(hook_repo: Path, hook: str = "leaklint") -> str:
    """The README's ``.pre-commit-config.yaml`` as written, pointed at the local hook repository
    (and, for ``hook="leaklint-fix"``, with the hook id the README tells fixers to use)."""
    match = re.search(r"^## pre-commit\n\n```yaml\n(.*?)```", README, re.S | re.M)
    assert match, "README.md lost its pre-commit block"
    config = match.group(1)
    assert f"    rev: v{__version__}\n" in config, "the README's rev must be this version's tag"
    assert "      - id: leaklint " in config
    return config.replace("https://github.com/leaklint/leaklint", hook_repo.as_posix()).replace("- id: leaklint ", f"- id: {hook} ")


def user_repo(path: Path, hook_repo: Path, files: dict[str, str], hook: str = "leaklint") -> Path:
    """A user's git repository with ``files`` and the README's pre-commit configuration, committed."""
    path.mkdir()
    (path / ".pre-commit-config.yaml").write_text(readme_config(hook_repo, hook))
    for name, content in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(content)
    commit_all(path)
    return path


def pre_commit_run(repo: Path, pre_commit_home: Path, *command: str) -> tuple[int, str]:
    """``pre-commit COMMAND`` (default ``run``) ``--all-files --verbose`` in ``repo``: exit code and output."""
    result = subprocess.run(
        [sys.executable, "-m", "pre_commit", *(command or ("run",)), "--all-files", "--verbose", "--color=never"],
        cwd=repo,
        env=environment(pre_commit_home),
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = result.stdout + result.stderr
    assert "Traceback" not in output, output
    return result.returncode, output


@pytest.mark.slow
def test_try_repo_fails_on_a_leaky_file(tmp_path: Path, hook_repo: Path, pre_commit_home: Path) -> None:
    repo = user_repo(tmp_path / "project", hook_repo, {"train.py": LEAKY_LOOP, "README.md": "# project\n"})
    code, output = pre_commit_run(repo, pre_commit_home, "try-repo", str(hook_repo), "leaklint")
    assert code == 1, output
    assert re.search(r"^leaklint\.+Failed$", output, re.MULTILINE), output
    assert "- exit code: 1" in output
    assert "train.py:10:9: LL101" in output


@pytest.mark.slow
def test_try_repo_passes_when_no_python_file_is_staged(tmp_path: Path, hook_repo: Path, pre_commit_home: Path) -> None:
    repo = user_repo(tmp_path / "project", hook_repo, {"README.md": "# not a line of Python\n"})
    code, output = pre_commit_run(repo, pre_commit_home, "try-repo", str(hook_repo), "leaklint")
    assert code == 0, output
    assert re.search(r"^leaklint\.+\(no files to check\)Skipped$", output, re.MULTILINE), output


@pytest.mark.slow
def test_the_hook_fails_a_commit_with_a_leak(tmp_path: Path, hook_repo: Path, pre_commit_home: Path) -> None:
    repo = user_repo(tmp_path / "project", hook_repo, {"train.py": LEAKY_LOOP, "README.md": "# project\n"})
    code, output = pre_commit_run(repo, pre_commit_home)
    assert code == 1, output
    assert re.search(r"^leaklint\.+Failed$", output, re.MULTILINE), output
    assert "train.py:10:9: LL101" in output


@pytest.mark.slow
def test_the_hook_lints_a_staged_notebook(tmp_path: Path, hook_repo: Path, pre_commit_home: Path) -> None:
    cell = {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": LEAKY_LOOP.splitlines(keepends=True)}
    notebook = json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n"
    repo = user_repo(tmp_path / "project", hook_repo, {"train.ipynb": notebook})
    code, output = pre_commit_run(repo, pre_commit_home)
    assert code == 1, output
    assert "train.ipynb:cell 1:10:9: LL101" in output


@pytest.mark.slow
def test_the_hook_passes_clean_code(tmp_path: Path, hook_repo: Path, pre_commit_home: Path) -> None:
    repo = user_repo(tmp_path / "project", hook_repo, {"train.py": CLEAN_LOOP})
    code, output = pre_commit_run(repo, pre_commit_home)
    assert code == 0, output
    assert re.search(r"^leaklint\.+Passed$", output, re.MULTILINE), output


@pytest.mark.slow
def test_the_hook_respects_leaklint_excludes(tmp_path: Path, hook_repo: Path, pre_commit_home: Path) -> None:
    """pre-commit names every staged file; the hook's --force-exclude still honours the config."""
    files = {
        "pyproject.toml": '[tool.leaklint]\nextend-exclude = ["generated"]\n',
        "train.py": CLEAN_LOOP,
        "generated/train_copy.py": LEAKY_LOOP,
    }
    repo = user_repo(tmp_path / "project", hook_repo, files)
    code, output = pre_commit_run(repo, pre_commit_home)
    assert code == 0, output
    assert "generated" not in output


# --- the fixing hook -----------------------------------------------------------------------------
EXCLUDING_PROJECT = {
    "pyproject.toml": '[tool.leaklint]\nextend-exclude = ["generated"]\n',
    "train.py": LEAKY_LOOP,
    "generated/train_copy.py": LEAKY_LOOP,
}


@pytest.mark.slow
def test_try_repo_fix_hook_fixes_staged_files_but_never_excluded_ones(tmp_path: Path, hook_repo: Path, pre_commit_home: Path) -> None:
    repo = user_repo(tmp_path / "project", hook_repo, EXCLUDING_PROJECT)
    code, output = pre_commit_run(repo, pre_commit_home, "try-repo", str(hook_repo), "leaklint-fix")
    assert code == 1, output
    assert re.search(r"^leaklint \(apply safe fixes\)\.+Failed$", output, re.MULTILINE), output
    assert "- files were modified by this hook" in output
    assert (repo / "train.py").read_text() == FIXED_LOOP
    assert (repo / "generated" / "train_copy.py").read_text() == LEAKY_LOOP, "an excluded file was rewritten"


@pytest.mark.slow
def test_the_readme_fix_hook_passes_once_its_fixes_are_committed(tmp_path: Path, hook_repo: Path, pre_commit_home: Path) -> None:
    repo = user_repo(tmp_path / "project", hook_repo, EXCLUDING_PROJECT, hook="leaklint-fix")
    code, output = pre_commit_run(repo, pre_commit_home)
    assert code == 1 and "- files were modified by this hook" in output, output
    assert (repo / "train.py").read_text() == FIXED_LOOP
    assert (repo / "generated" / "train_copy.py").read_text() == LEAKY_LOOP
    commit_all(repo)
    code, output = pre_commit_run(repo, pre_commit_home)
    assert code == 0, output
    assert re.search(r"^leaklint \(apply safe fixes\)\.+Passed$", output, re.MULTILINE), output


def test_the_readmes_rev_is_a_tag_of_this_repository_on_this_version() -> None:
    """The README tells users ``rev: v<version>``: pre-commit clones that tag, so it must exist and
    hold this version. Until the release is tagged the test says so (a skip with the command)."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    tag = f"v{__version__}"
    listed = subprocess.run(["git", "tag", "--list", tag], cwd=ROOT, env=environment(), capture_output=True, text=True, timeout=60)
    if listed.returncode != 0:
        pytest.skip(f"git tag failed: {listed.stderr.strip()}")
    if listed.stdout.strip() != tag:
        pytest.skip(f"the README's pre-commit rev {tag} is not a tag yet: create it on the release commit (git tag {tag} <commit>)")
    shown = subprocess.run(["git", "show", f"{tag}:leaklint/__init__.py"], cwd=ROOT, env=environment(), capture_output=True, text=True, timeout=60)
    assert f'__version__ = "{__version__}"' in shown.stdout, f"tag {tag} is on a commit of another version"
    hooks = subprocess.run(["git", "show", f"{tag}:.pre-commit-hooks.yaml"], cwd=ROOT, env=environment(), capture_output=True, text=True, timeout=60)
    assert "id: leaklint-fix" in hooks.stdout, f"tag {tag} has no leaklint-fix hook, which the README offers"


def test_every_hook_keeps_excluded_files_out() -> None:
    """pre-commit names every staged file: each hook's args start with --force-exclude."""
    hooks = yaml_hooks()
    assert [hook["id"] for hook in hooks] == ["leaklint", "leaklint-fix"]
    for hook in hooks:
        assert hook["args"][0] == "--force-exclude", hook
    assert next(h for h in hooks if h["id"] == "leaklint-fix")["args"] == ["--force-exclude", "--fix"]


def yaml_hooks() -> list[dict]:
    yaml = pytest.importorskip("yaml")  # PyYAML comes with pre-commit
    return yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
