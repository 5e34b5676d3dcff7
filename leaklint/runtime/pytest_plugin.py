"""pytest plugin (entry point ``leaklint``): assert that a training step does not leak.

Two spellings, same check (:func:`leaklint.runtime.assert_no_growth`):

* the ``leak_guard`` fixture: ``leak_guard(step, iterations=20, warmup=3, tolerance="4 KiB")``
  inside any test;
* the ``no_memory_growth`` marker on a test that *returns* its step function:
  ``@pytest.mark.no_memory_growth(iterations=20, tolerance="4 KiB")``.

Loading the plugin imports neither torch nor the meters; they load when a guarded test runs.
"""

from __future__ import annotations

from typing import Any, Callable

import pytest

MARKER = "no_memory_growth"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(iterations=20, warmup=3, tolerance='4 KiB', device='auto'): the test returns a step "
        "function; fail if calling it repeatedly grows live tensor memory (leaklint)",
    )


@pytest.fixture
def leak_guard() -> Callable[..., Any]:
    """``leak_guard(step, **options)``: call ``step`` repeatedly, fail if tensor memory grows."""
    from leaklint.runtime.guard import assert_no_growth

    return assert_no_growth


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    marker = pyfuncitem.get_closest_marker(MARKER)
    if marker is None:
        return None
    from leaklint.runtime.guard import assert_no_growth

    arguments = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
    step = pyfuncitem.obj(**arguments)
    if not callable(step):
        pytest.fail(f"a test marked @pytest.mark.{MARKER} must return its step function, got {type(step).__name__}", pytrace=False)
    assert_no_growth(step, *marker.args, **marker.kwargs)
    return True
