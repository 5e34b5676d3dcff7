"""assert_no_growth and the pytest plugin: a leaky step fails, naming the line that allocated what
it keeps; the fixed step passes."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from leaklint.runtime import assert_no_growth  # noqa: E402
from leaklint.runtime.guard import measure_growth  # noqa: E402


def line_of(marker: str) -> int:
    """The line of this file that ends with ``marker`` (so the test survives edits above it)."""
    lines = Path(__file__).read_text().splitlines()
    return next(number for number, text in enumerate(lines, 1) if text.endswith(marker) and "line_of" not in text)


def make_steps():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))
    x = torch.randn(16, 32)
    history = []

    def leaky():
        loss = model(x).pow(2).mean()  # allocates the graph
        history.append(loss)

    def fixed():
        loss = model(x).pow(2).mean()
        history.append(loss.item())

    return leaky, fixed


def test_a_step_that_keeps_its_graph_fails_and_names_the_line_that_allocated_it():
    leaky, _ = make_steps()
    with pytest.raises(AssertionError) as failure:
        assert_no_growth(leaky, iterations=10)
    message = str(failure.value)
    assert "step grows" in message and "/iter" in message
    assert f"test_runtime_guard.py:{line_of('# allocates the graph')} grows" in message


def test_the_same_step_with_item_passes_and_reports_what_it_measured():
    _, fixed = make_steps()
    report = assert_no_growth(fixed, iterations=10)
    assert report.growth_per_iteration == 0
    assert report.device == "cpu"


def test_the_growth_is_exact_and_the_tolerance_is_inclusive():
    kept = []
    report = measure_growth(lambda: kept.append(torch.ones(2048)), iterations=5)  # 8 KiB per call
    assert report.growth_per_iteration == 8192
    assert_no_growth(lambda: kept.append(torch.ones(2048)), iterations=5, tolerance="8 KiB")
    with pytest.raises(AssertionError, match="8.0 KiB/iter"):
        assert_no_growth(lambda: kept.append(torch.ones(2048)), iterations=5, tolerance="4 KiB")


def test_sites_are_the_lines_whose_tensors_accumulate_not_buffers_each_step_recreates():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    batch = torch.randn(64, 64)
    kept = []

    def step():
        optimizer.zero_grad()
        model(batch).mean().backward()  # re-creates every gradient each step: alive at the end, not growing
        optimizer.step()
        kept.append(torch.zeros(2048))  # the leak: 8 KiB per step

    report = measure_growth(step, iterations=8)
    assert report.growth_per_iteration == 8192
    (site,) = report.sites
    assert site.where.endswith(f"test_runtime_guard.py:{line_of('# the leak: 8 KiB per step')}")
    assert (site.bytes, site.tensors) == (8192, 1)
    assert f":{line_of('# re-creates every gradient each step: alive at the end, not growing')}" not in report.describe()


def faq_step():
    """The PyTorch FAQ's leak: backward() every step frees the activations, the kept loss holds the graph."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))
    x = torch.randn(16, 32)
    history = []

    def step():
        model.zero_grad()
        loss = model(x).pow(2).mean()  # the kept scalar
        loss.backward()
        history.append(loss)

    return step


def heap_meter_or_skip():
    from leaklint.runtime.host_meter import HeapMeter

    reason = HeapMeter().unavailable()
    if reason:
        pytest.skip(reason)


def test_a_graph_kept_after_backward_fails_on_host_memory_though_tensor_bytes_stay_flat():
    heap_meter_or_skip()
    with pytest.raises(AssertionError) as failure:
        assert_no_growth(faq_step(), iterations=10)
    message = str(failure.value)
    first, tensors, host = message.splitlines()[:3]
    assert first.startswith("step grows ") and first.endswith("/iter of host memory (median over 10 iterations after 3 warm-up)")
    assert "tensor memory" not in first
    assert tensors.startswith("  live cpu tensor memory: 4 B/iter, tolerance 4.0 KiB/iter") and "<- grows" not in tensors
    assert host.startswith("  host memory (malloc heap outside tensor storage): ") and host.endswith("<- grows")
    assert "autograd graphs kept alive" in message
    assert f"test_runtime_guard.py:{line_of('# the kept scalar')} grows 4 B/iter (1 tensor/iter)" in message


def test_host_tolerance_none_checks_tensor_memory_only():
    report = assert_no_growth(faq_step(), iterations=5, host_tolerance=None)
    assert report.host_growth_per_iteration is None and report.growth_per_iteration <= 4096
    assert "host memory: not checked" in report.describe()


def test_the_host_check_subtracts_the_cpu_tensor_storage_it_also_sees():
    heap_meter_or_skip()
    kept = []
    report = assert_no_growth(lambda: kept.append(torch.ones(64 * 1024)), iterations=5, tolerance="256 KiB")  # 256 KiB/step
    assert report.growth_per_iteration == 256 * 1024
    assert report.host_growth_per_iteration is not None and report.host_growth_per_iteration < 1024


def test_without_mallinfo2_the_tensor_check_still_runs_and_says_host_memory_was_not_measured(monkeypatch):
    import leaklint.runtime.host_meter as host_meter

    monkeypatch.setattr(host_meter, "_mallinfo2", lambda: None)
    report = assert_no_growth(faq_step(), iterations=5)
    assert report.host_growth_per_iteration is None
    assert "host memory: not measured, host meter unavailable" in report.describe()
    kept = []
    with pytest.raises(AssertionError, match="of live cpu tensor memory"):
        assert_no_growth(lambda: kept.append(torch.ones(4096)), iterations=5)


PLUGIN_TESTS = textwrap.dedent(
    """\
    import pytest
    import torch

    model = torch.nn.Linear(32, 64)
    x = torch.randn(64, 32)  # outputs of 16 KiB
    kept = []

    def test_fixture_catches_a_leak(leak_guard):
        leak_guard(lambda: kept.append(model(x)), iterations=5)

    def test_fixture_passes_a_clean_step(leak_guard):
        leak_guard(lambda: kept.append(model(x).sum().item()), iterations=5)

    @pytest.mark.no_memory_growth(iterations=5)
    def test_marker_catches_a_leak():
        return lambda: kept.append(model(x))

    @pytest.mark.no_memory_growth(iterations=5, tolerance="4 KiB")
    def test_marker_passes_a_clean_step():
        def step():
            with torch.no_grad():
                kept.append(model(x).sum().item())
        return step

    events = []

    @pytest.fixture
    def trainer():  # setup and teardown around the step: a fixture that yields
        events.append("setup")
        yield lambda: kept.append(model(x).sum().item())
        events.append("teardown")

    @pytest.mark.no_memory_growth(iterations=5)
    def test_marker_with_a_yield_fixture(trainer):
        return trainer

    def test_the_fixture_was_torn_down_after_the_check():
        assert events == ["setup", "teardown"]
    """
)


def test_the_pytest_plugin_offers_a_fixture_and_a_marker(tmp_path):
    (tmp_path / "test_steps.py").write_text(PLUGIN_TESTS)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "ignore", "test_steps.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )
    assert "2 failed, 4 passed" in run.stdout, run.stdout + run.stderr
    assert "FAILED test_steps.py::test_fixture_catches_a_leak" in run.stdout
    assert "FAILED test_steps.py::test_marker_catches_a_leak" in run.stdout
    assert "test_steps.py:9 grows" in run.stdout  # the line that allocated the kept outputs
    # Failures read as the user's test failing, not as tracebacks through leaklint's internals.
    assert "pytest_plugin.py" not in run.stdout and "guard.py" not in run.stdout
    assert ">       leak_guard(lambda: kept.append(model(x)), iterations=5)" in run.stdout
    assert "the step was returned by test_marker_catches_a_leak (test_steps.py:14)" in run.stdout
