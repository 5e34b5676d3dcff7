"""The meters are exact where they claim to be: known tensors in, the same bytes out."""

from __future__ import annotations

import sys

import pytest

torch = pytest.importorskip("torch")

from leaklint.runtime.host_meter import HeapMeter, PythonMeter  # noqa: E402
from leaklint.runtime.tensor_meter import CpuMeter  # noqa: E402


def run(meter: CpuMeter, step, iterations: int = 6):
    meter.start()
    for index in range(iterations):
        with meter.iteration(index):
            step()
    return meter.stop()


def test_the_cpu_meter_counts_exactly_the_bytes_a_step_keeps():
    kept = []
    series = run(CpuMeter(), lambda: kept.append(torch.ones(1024)))  # 4 KiB of float32 per step
    assert series.live == [4096.0 * (i + 1) for i in range(6)]
    assert series.allocated == [4096.0] * 6


def test_the_cpu_meter_sees_a_temporary_in_the_peak_but_not_in_what_is_left():
    def step():
        scratch = torch.ones(256, 1024)  # 1 MiB, freed when the step returns
        return scratch.sum()

    series = run(CpuMeter(), step)
    assert series.live == [0.0] * 6
    assert min(series.peaks) >= 1024 * 1024


def test_blocks_allocated_before_metering_are_invisible_and_their_frees_do_not_count():
    before = torch.ones(1024)
    holder = [before]
    series = run(CpuMeter(), lambda: holder.clear(), iterations=2)
    assert series.live == [0.0, 0.0]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="mallinfo2 is glibc's")
def test_the_heap_meter_sees_a_megabyte_kept_on_the_host():
    meter = HeapMeter()
    if meter.unavailable():
        pytest.skip(meter.unavailable())
    meter.start()
    before = meter.read()
    kept = bytearray(1024 * 1024)
    assert meter.read() - before >= 1024 * 1024
    del kept


def test_the_python_meter_ignores_garbage_in_cycles():
    meter = PythonMeter()
    meter.start()
    try:
        base = meter.read()
        for _ in range(100):
            cycle = [bytearray(10_000)]
            cycle.append(cycle)
        del cycle
        assert meter.read() - base < 10_000
    finally:
        meter.stop()
