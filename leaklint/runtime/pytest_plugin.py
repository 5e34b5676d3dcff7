"""pytest plugin (entry point ``leaklint``): assert that a training step does not leak.

Two spellings, same check (:func:`leaklint.runtime.assert_no_growth`):

* the ``leak_guard`` fixture: ``leak_guard(step, iterations=20, warmup=3, tolerance="4 KiB")``
  inside any test;
* the ``no_memory_growth`` marker on a test that *returns* its step function:
  ``@pytest.mark.no_memory_growth(iterations=20, tolerance="4 KiB")``. The test must ``return``
  the step: pytest does not run generator (``yield``) tests at all, so setup and teardown around
  the step belong in a fixture that yields (the marked test takes it as an argument), and the
  guard runs after the test returned, before the fixture's teardown.

A failure reads as the user's test failing, not as a traceback through this plugin: the fixture's
check hides its own frames (``__tracebackhide__``), and the marker, whose test has already
returned when the check runs, reports the test's ``file:line`` and the measurement without a
traceback.

Loading the plugin imports neither torch nor the meters; they load when a guarded test runs.
Without torch a guarded test is skipped, with the reason and the command that installs torch
(the plugin comes with every install of leaklint, torch does not); a torch that is installed but
fails to import fails the test with the error, in one line.
"""

from __future__ import annotations

from typing import Any, Callable

import pytest

MARKER = "no_memory_growth"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(iterations=20, warmup=3, tolerance='4 KiB', device='auto', host_tolerance='1 KiB'): the test "
        "returns a step function; fail if calling it repeatedly grows live tensor memory or host memory (leaklint)",
    )


@pytest.fixture
def leak_guard() -> Callable[..., Any]:
    """``leak_guard(step, **options)``: call ``step`` repeatedly, fail if tensor or host memory grows."""
    _require_torch("the leak_guard fixture")
    from leaklint.runtime.guard import assert_no_growth

    return assert_no_growth


def _require_torch(what: str) -> None:
    """Skip the test when torch is not installed; fail it in one line when torch is broken."""
    reason = _torch_missing(what)
    if reason is not None:
        pytest.skip(reason)
    try:
        import torch  # noqa: F401
    except Exception as error:  # noqa: BLE001 - a broken install: ImportError, OSError, RuntimeError
        pytest.fail(f"{what} needs torch, which is installed but failed to import: {type(error).__name__}: {error}", pytrace=False)


def _torch_missing(what: str) -> str | None:
    """Why ``what`` cannot run, when torch is not installed at all (the reason names the command)."""
    import importlib.util

    if importlib.util.find_spec("torch") is not None:
        return None
    from leaklint.runtime.repro import TORCH_INSTALL

    return f"{what} needs torch, which is not installed: {TORCH_INSTALL}"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Without torch, a marked test is skipped before it runs (its step needs torch), reported at
    the test's own location."""
    marked = [item for item in items if item.get_closest_marker(MARKER) is not None]
    reason = _torch_missing(f"@pytest.mark.{MARKER}") if marked else None
    if reason is not None:
        for item in marked:
            item.add_marker(pytest.mark.skip(reason=reason))


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    marker = pyfuncitem.get_closest_marker(MARKER)
    if marker is None:
        return None
    _require_torch(f"@pytest.mark.{MARKER}")
    from leaklint.runtime.guard import measure_growth

    arguments = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
    step = pyfuncitem.obj(**arguments)
    where = _location(pyfuncitem)
    if not callable(step):
        pytest.fail(
            f"{where}: a test marked @pytest.mark.{MARKER} must return its step function, got {type(step).__name__}",
            pytrace=False,
        )
    report = measure_growth(step, *marker.args, **marker.kwargs)
    if report.grows:
        pytest.fail(f"{report.describe()}\nthe step was returned by {pyfuncitem.name} ({where})", pytrace=False)
    return True


def _location(item: pytest.Function) -> str:
    """``file:line`` of the test function's definition, relative to pytest's root directory."""
    path, line, _ = item.location
    return f"{path}:{(line or 0) + 1}"
