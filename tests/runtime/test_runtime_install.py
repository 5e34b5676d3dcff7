"""The runtime parts in the environments users have: without torch, with an old or a broken one,
and with torch's C++ allocator warning kept out of what leaklint prints.

torch is never pulled in by leaklint (its default wheel is a multi-GB CUDA build), so every
message names it on its own with the CPU wheel index; the ``leak_guard`` fixture and the marker
skip with that reason instead of failing with ModuleNotFoundError. Each case runs the real
command (``leaklint verify``, ``pytest``) in a subprocess; ``without_torch`` (conftest) hides an
installed torch from it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import run_leaklint, text
from leaklint.runtime.repro import TORCH_INSTALL

CPU_INDEX = "pip install torch --index-url https://download.pytorch.org/whl/cpu"
ALLOCATOR_WARNING = "Memory block of unknown size"


def fake_torch(tmp_path: Path, body: str) -> dict[str, str]:
    """Environment variables that put a module ``torch`` with ``body`` before any installed one."""
    shim = tmp_path / "fake-torch"
    (shim / "torch").mkdir(parents=True)
    (shim / "torch" / "__init__.py").write_text(body)
    return {"PYTHONPATH": os.pathsep.join(filter(None, [str(shim), os.environ.get("PYTHONPATH")]))}


def run_pytest(project: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    environment = {**os.environ, "NO_COLOR": "1", **(env or {})}
    environment.pop("PYTEST_ADDOPTS", None)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rs", *args],
        cwd=project, env=environment, capture_output=True, text=True, timeout=300,
    )


GUARDED_TESTS = textwrap.dedent(
    """\
    import pytest


    def test_with_the_fixture(leak_guard):
        leak_guard(lambda: None, iterations=5)


    @pytest.mark.no_memory_growth(iterations=5)
    def test_with_the_marker():
        return lambda: None
    """
)


# --- install advice ----------------------------------------------------------------------------------
def test_verify_without_torch_names_torch_and_the_cpu_wheel_index(tmp_path, without_torch):
    result = run_leaklint("verify", "LL101", "--device", "cpu", cwd=tmp_path, env=without_torch)
    out, err = text(result)
    assert result.returncode == 2 and out == ""
    assert err == (
        "leaklint: error: the runtime verifier needs torch 2.1 or newer, which leaklint does not install for you: "
        f"{TORCH_INSTALL}\n"
    )
    assert CPU_INDEX in err and "https://pytorch.org/get-started/locally/" in err


def test_verify_with_a_torch_older_than_2_1_says_so(tmp_path):
    result = run_leaklint("verify", "LL101", cwd=tmp_path, env=fake_torch(tmp_path, "__version__ = '2.0.1+cpu'\n"))
    assert result.returncode == 2
    assert text(result)[1] == (
        "leaklint: error: the runtime verifier needs torch 2.1 or newer, found 2.0.1+cpu: "
        "pip install --upgrade torch --index-url https://download.pytorch.org/whl/cpu (CPU only; for CUDA, "
        "the command https://pytorch.org/get-started/locally/ gives)\n"
    )


def test_a_rule_page_says_to_install_torch_first_and_the_extra_after():
    out, _ = text(run_leaklint("rule", "LL101"))
    repro = out.split("## Runtime repro", 1)[1]
    assert CPU_INDEX in repro and "no extra of leaklint brings" in repro
    assert repro.index(CPU_INDEX) < repro.index("pip install 'leaklint-ml[runtime]'")


# --- the pytest plugin without torch -------------------------------------------------------------------
def test_the_guard_skips_without_torch_and_says_why(tmp_path, without_torch):
    (tmp_path / "test_guarded.py").write_text(GUARDED_TESTS)
    result = run_pytest(tmp_path, env=without_torch)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 skipped" in result.stdout
    assert "ModuleNotFoundError" not in result.stdout + result.stderr
    assert f"SKIPPED [1] test_guarded.py:4: the leak_guard fixture needs torch, which is not installed: {TORCH_INSTALL}" in result.stdout
    assert f"SKIPPED [1] test_guarded.py:8: @pytest.mark.no_memory_growth needs torch, which is not installed: {TORCH_INSTALL}" in result.stdout


def test_assert_no_growth_called_directly_without_torch_says_how_to_install_it(tmp_path, without_torch):
    """The README's guard example calls assert_no_growth in a plain test, with no fixture."""
    (tmp_path / "test_direct.py").write_text(
        "from leaklint.runtime import assert_no_growth\n\n\ndef test_step():\n    assert_no_growth(lambda: None, iterations=5)\n"
    )
    result = run_pytest(tmp_path, env=without_torch)
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"ModuleNotFoundError: assert_no_growth needs torch, which is not installed: {TORCH_INSTALL}" in result.stdout
    assert "No module named 'torch'" not in result.stdout
    assert "guard.py" not in result.stdout, "a traceback through leaklint"


def test_the_guard_fails_in_one_line_when_torch_is_broken(tmp_path):
    (tmp_path / "test_guarded.py").write_text(GUARDED_TESTS)
    broken = fake_torch(tmp_path, "raise ImportError('libtorch_cpu.so: cannot open shared object file')\n")
    result = run_pytest(tmp_path, env=broken)
    assert result.returncode == 1
    assert "1 failed, 1 error" in result.stdout  # the marked test fails; the fixture's setup errs
    assert (
        "the leak_guard fixture needs torch, which is installed but failed to import: "
        "ImportError: libtorch_cpu.so: cannot open shared object file"
    ) in result.stdout
    assert "pytest_plugin.py" not in result.stdout, "a traceback through leaklint"


# --- torch's allocator warning ----------------------------------------------------------------------
def test_verify_prints_no_allocator_warning(tmp_path):
    pytest.importorskip("torch")
    # LL103's repro replaces a hidden state made before measuring: the CPU allocator warns then.
    result = run_leaklint("verify", "LL101", "LL103", "--device", "cpu", "--iterations", "4", cwd=tmp_path, env={"XDG_CACHE_HOME": str(tmp_path)})
    out, err = text(result)
    assert result.returncode == 0, out + err
    assert "LL103  cpu" in out
    assert ALLOCATOR_WARNING not in out + err


def test_the_guard_prints_no_allocator_warning_but_keeps_the_steps_own_output(tmp_path):
    pytest.importorskip("torch")
    (tmp_path / "test_step.py").write_text(
        textwrap.dedent(
            """\
            import os
            import torch

            state = {"x": torch.randn(4096)}  # made before the guard starts measuring


            def test_step(leak_guard):
                def step():
                    state["x"] = torch.randn(4096)  # frees a block the profiler never saw allocated
                    os.write(2, b"the step's own line\\n")

                leak_guard(step, iterations=5)
            """
        )
    )
    result = run_pytest(tmp_path, "-s")
    assert result.returncode == 0, result.stdout + result.stderr
    assert ALLOCATOR_WARNING not in result.stdout + result.stderr
    assert "the step's own line" in result.stderr
