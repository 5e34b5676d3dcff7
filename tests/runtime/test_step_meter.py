"""``StepMeter``: memory across the step boundaries of a program that runs by itself (the core of
``leaklint run`` and the training callbacks)."""

from __future__ import annotations

import pytest

from leaklint.runtime.steps import MIN_PHASE, StepMeter, phase_sizes

torch = pytest.importorskip("torch")


def test_the_steps_after_the_warm_up_are_split_between_the_host_and_the_tensor_phase():
    assert phase_sizes(30, 5) == (12, 13)
    with pytest.raises(ValueError, match="at least 6"):
        phase_sizes(10, 5)
    assert MIN_PHASE == 3


def test_a_growing_list_of_cpu_tensors_is_measured_and_named():
    meter = StepMeter(steps=14, warmup=2, device="cpu")
    kept = []
    done = False
    while not done:
        kept.append(torch.ones(2048))  # 8 KiB per step
        done = meter.boundary()
    report = meter.report()
    assert report.tensor_grows and 7000 < report.growth_per_iteration < 9000
    assert report.sites and report.sites[0].where.endswith(f"test_step_meter.py:{_line_of('kept.append(torch.ones(2048))')}")
    assert meter.boundary() is True  # later steps cost nothing


def test_a_flat_loop_stays_flat():
    meter = StepMeter(steps=14, warmup=2, device="cpu")
    while not meter.boundary():
        torch.ones(2048).sum()
    assert not meter.report().grows


class _FakeCuda:
    """Just enough of torch.cuda for the meter's CUDA path: every step keeps one 1 MiB block
    allocated from user code at train.py:7."""

    def __init__(self):
        self.blocks = []
        self.recording = None

    def is_available(self):
        return True

    def is_initialized(self):
        return True

    def synchronize(self):
        pass

    def memory_allocated(self):
        return sum(size for size in self.blocks)

    def step(self):
        self.blocks.append(1 << 20)

    def _record_memory_history(self, enabled="all", max_entries=0):
        self.recording = enabled

    def _snapshot(self):
        frames = [{"filename": "train.py", "line": 7, "name": "main"}]
        blocks = [{"state": "active_allocated", "size": size, "frames": frames} for size in self.blocks]
        return {"segments": [{"blocks": blocks}]}


def test_on_cuda_the_allocator_counters_and_snapshots_are_read_at_each_boundary(monkeypatch):
    fake = _FakeCuda()
    monkeypatch.setattr(torch.cuda, "is_available", fake.is_available)
    monkeypatch.setattr(torch.cuda, "is_initialized", fake.is_initialized)
    monkeypatch.setattr(torch.cuda, "synchronize", fake.synchronize)
    monkeypatch.setattr(torch.cuda, "memory_allocated", fake.memory_allocated)
    monkeypatch.setattr(torch.cuda.memory, "_record_memory_history", fake._record_memory_history)
    monkeypatch.setattr(torch.cuda.memory, "_snapshot", fake._snapshot)
    meter = StepMeter(steps=14, warmup=2, device="auto")
    while True:
        fake.step()
        if meter.boundary():
            break
    report = meter.report(host_tolerance=None)
    assert report.device == "cuda" and fake.recording is None  # history recording stopped again
    assert report.growth_per_iteration == float(1 << 20)
    assert [(site.where, site.bytes) for site in report.sites] == [("train.py:7", float(1 << 20))]


def _line_of(text: str) -> int:
    with open(__file__, encoding="utf-8") as handle:
        return next(number for number, line in enumerate(handle, 1) if text in line and "_line_of" not in line)


def test_a_bounded_buffer_filled_before_the_tensor_phase_is_not_growth():
    from collections import deque

    frames = deque((torch.ones(4096) for _ in range(8)), maxlen=8)  # filled before measuring
    meter = StepMeter(steps=16, warmup=2, device="cpu")
    while not meter.boundary():
        frames.append(torch.ones(4096))  # 16 KiB in, the oldest 16 KiB out
    report = meter.report()
    assert not report.tensor_grows, report.describe()


def test_steps_of_unequal_work_that_swing_up_and_down_are_not_growth():
    from leaklint.runtime.verdict import growth_per_iteration, steady_growth

    swinging = [0.0, 60.0, 0.0, 60.0, 0.0, 60.0, 0.0, 60.0]
    assert growth_per_iteration(swinging, 1) == 60.0  # the median change picks a swing
    assert steady_growth(swinging, 1) == 0.0  # nothing under the swings
    climbing = [float(8 * i) for i in range(10)]
    assert steady_growth(climbing, 1) == growth_per_iteration(climbing, 1) == 8.0
    lazy = [0.0, 500.0, 500.0, 500.0, 500.0, 500.0, 500.0, 500.0, 500.0]
    assert steady_growth(lazy, 1) == 0.0
    every_other = [0.0, 8.0, 8.0, 16.0, 16.0, 24.0, 24.0, 32.0, 32.0]
    assert 3.0 <= steady_growth(every_other, 1) <= 5.0
