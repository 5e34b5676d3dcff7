"""Shared helpers: run the real command line in a subprocess, as a user would."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

LEAKY_LOOP = textwrap.dedent(
    """\
    import torch

    def train(model, loader, optimizer, criterion):
        total_loss = 0
        for x, y in loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            total_loss += loss
        return total_loss
    """
)
CLEAN_LOOP = LEAKY_LOOP.replace("total_loss += loss", "total_loss += loss.item()")


def run_leaklint(*args: str, cwd: Path | str | None = None, input: bytes | None = None, env: dict | None = None, user: int | None = None) -> subprocess.CompletedProcess:
    """``python -m leaklint ARGS`` with output captured as text."""
    environment = {**os.environ, "NO_COLOR": "1"}
    environment.pop("FORCE_COLOR", None)  # a CI's own setting must not colour the output; a test's may
    environment.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "leaklint", *args],
        cwd=cwd,
        input=input,
        capture_output=True,
        env=environment,
        timeout=300,
        user=user,
    )


def text(result: subprocess.CompletedProcess) -> tuple[str, str]:
    return result.stdout.decode(), result.stderr.decode()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An empty directory to lint, with no config above it that could interfere."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text("[tool.leaklint]\n")
    return root


# A ``sitecustomize`` that makes torch look uninstalled to the interpreter that loads it: the path
# finder no longer sees it, so ``importlib.util.find_spec("torch")`` is None and ``import torch``
# raises ModuleNotFoundError, exactly as in an environment without torch.
HIDE_TORCH = """\
import importlib.machinery

_find_spec = importlib.machinery.PathFinder.find_spec.__func__


def _without_torch(cls, name, path=None, target=None):
    if name == "torch" or name.startswith("torch."):
        return None
    return _find_spec(cls, name, path, target)


importlib.machinery.PathFinder.find_spec = classmethod(_without_torch)
"""


@pytest.fixture
def without_torch(tmp_path: Path) -> dict[str, str]:
    """Environment variables for a subprocess that runs as if torch were not installed."""
    site = tmp_path / "hide-torch"
    site.mkdir()
    (site / "sitecustomize.py").write_text(HIDE_TORCH)
    return {"PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))}
