"""The verdict arithmetic of the runtime verifier, on hand-made series (no torch needed)."""

from __future__ import annotations

import pytest

from leaklint.findings import Severity
from leaklint.runtime.units import format_bytes, parse_size
from leaklint.runtime.verdict import (
    GROWTH, HOST_GROWTH, NOT_CONFIRMED, PEAK, PERF, VariantStats, decide, growth_per_iteration,
)  # fmt: skip

KIB = 1024


def stats(live=(), peaks=(), allocated=(), host=(), seconds=(), warmup=2) -> VariantStats:
    return VariantStats(tuple(live), tuple(peaks), tuple(allocated), tuple(host), tuple(seconds), warmup)


def steady(per_iteration: float, count: int = 8, start: float = 0.0) -> list[float]:
    """Live bytes at the end of each iteration when every iteration keeps ``per_iteration`` more."""
    return [start + per_iteration * (index + 1) for index in range(count)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [("4 KiB", 4096), ("4KiB", 4096), ("2 MB", 2_000_000), ("1.5 MiB", 1.5 * 1024**2), (512, 512), ("10", 10)],
)
def test_sizes_are_parsed_as_people_write_them(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize("bad", ["four KiB", "4 KB/s", -1, "1 XB"])
def test_a_bad_size_says_how_to_write_one(bad):
    with pytest.raises(ValueError, match="size"):
        parse_size(bad)


def test_bytes_are_printed_in_the_largest_binary_unit():
    assert [format_bytes(v) for v in (0, 1023, 1024, 448 * KIB, 3 * 1024**2)] == ["0 B", "1023 B", "1.0 KiB", "448.0 KiB", "3.0 MiB"]


def test_growth_is_the_median_step_after_the_warmup():
    # A lazy 1 MiB buffer in the warm-up and a one-off 64 KiB cache later do not move the median.
    live = [1024 * KIB, 1024 * KIB, 1024 * KIB, 1088 * KIB, 1088 * KIB, 1088 * KIB]
    assert growth_per_iteration(live, warmup=1) == 0
    assert growth_per_iteration(steady(8 * KIB), warmup=3) == 8 * KIB


def test_leaky_growth_with_a_flat_fixed_variant_is_growth():
    verdict = decide(stats(live=steady(64 * KIB)), stats(live=[0] * 8))
    assert verdict.verdict == GROWTH
    assert verdict.proves(Severity.LEAK) and not verdict.proves(Severity.PEAK)


def test_growth_below_4_kib_is_flat():
    # (What it holds at the end is still compared: 8 x 3 KiB held against nothing is a peak.)
    assert decide(stats(live=steady(3 * KIB)), stats(live=[0] * 8)).verdict == PEAK


def test_the_threshold_scales_with_what_the_fixed_variant_allocates():
    # The fixed step allocates 10 MiB per iteration: 2% of it (205 KiB) is noise, not growth.
    fixed = stats(live=[0] * 8, allocated=[10 * 1024 * KIB] * 8)
    assert decide(stats(live=steady(100 * KIB)), fixed).verdict != GROWTH
    assert decide(stats(live=steady(300 * KIB)), fixed).verdict == GROWTH


def test_when_the_fixed_variant_grows_too_nothing_is_confirmed():
    verdict = decide(stats(live=steady(64 * KIB)), stats(live=steady(64 * KIB)))
    assert verdict.verdict == NOT_CONFIRMED
    assert "the fixed variant grows too" in verdict.reasons


def test_a_fixed_variant_that_grows_confirms_no_peak_and_no_perf_either():
    # The leaky step holds twice the peak and is twice as slow, but its "fix" grows: no verdict.
    leaky = stats(live=[0] * 8, peaks=[4 * 1024 * KIB] * 8, seconds=[0.002] * 8)
    fixed = stats(live=steady(64 * KIB), peaks=[2 * 1024 * KIB] * 8, seconds=[0.001] * 8)
    verdict = decide(leaky, fixed)
    assert verdict.verdict == NOT_CONFIRMED
    assert verdict.reasons == ("the fixed variant grows too",)


def test_host_growth_needs_flat_tensors_and_1_kib_more_than_fixed():
    flat = [0] * 8
    assert decide(stats(live=flat, host=steady(10 * KIB)), stats(live=flat, host=flat)).verdict == HOST_GROWTH
    assert decide(stats(live=flat, host=steady(10 * KIB)), stats(live=flat, host=steady(9.5 * KIB))).verdict == NOT_CONFIRMED


def test_a_higher_peak_or_more_bytes_held_between_steps_is_peak():
    flat = [0] * 8
    assert decide(stats(live=flat, peaks=[3 * 1024 * KIB] * 8), stats(live=flat, peaks=[2 * 1024 * KIB] * 8)).verdict == PEAK
    held = stats(live=[2 * 1024 * KIB] * 8, peaks=[3 * 1024 * KIB] * 8)
    assert decide(held, stats(live=[1024 * KIB] * 8, peaks=[3 * 1024 * KIB] * 8)).verdict == PEAK
    assert decide(stats(live=flat, peaks=[2.2 * 1024 * KIB] * 8), stats(live=flat, peaks=[2 * 1024 * KIB] * 8)).verdict == NOT_CONFIRMED


def test_a_slower_step_is_perf_by_its_median_time():
    flat = [0] * 8
    slow = stats(live=flat, seconds=[0.002, 0.002, 0.003, 0.003, 0.003, 0.0015, 0.003, 0.003])
    fast = stats(live=flat, seconds=[0.001] * 8)
    assert decide(slow, fast).verdict == PERF
    assert decide(stats(live=flat, seconds=[0.0013] * 8), fast).verdict == NOT_CONFIRMED


def test_noise_on_a_step_is_no_perf_finding():
    """Noise only adds time. Most leaky steps disturbed prove nothing while one of them ran as
    fast as the fixed ones; every tiny step disturbed proves nothing below 0.1 ms a step."""
    flat = [0] * 8
    disturbed_but_one = stats(live=flat, seconds=[0.001, 0.001, 0.003, 0.003, 0.003, 0.001, 0.003, 0.003])
    assert decide(disturbed_but_one, stats(live=flat, seconds=[0.001] * 8)).verdict == NOT_CONFIRMED
    every_one_disturbed = stats(live=flat, seconds=[50e-6] * 8)
    assert decide(every_one_disturbed, stats(live=flat, seconds=[10e-6] * 8)).verdict == NOT_CONFIRMED  # 40 us
    slower_every_time = stats(live=flat, seconds=[0.002] * 7 + [0.0012])
    assert decide(slower_every_time, stats(live=flat, seconds=[0.001] * 8)).verdict == PERF  # even its fastest step


def test_without_tensor_meters_memory_the_host_still_holds_after_the_last_step_is_peak():
    # a TensorFlow repro: a persistent tape kept between steps holds ~1 MiB on the heap, flat
    kept = stats(host=[984 * KIB] + [986 * KIB] * 7)
    released = stats(host=[2 * KIB] + [3 * KIB] * 7)
    assert decide(kept, released).verdict == PEAK
    # under 64 KiB more, or less than 1.25 times as much, is not a peak
    assert decide(stats(host=[40 * KIB] * 8), released).verdict == NOT_CONFIRMED
    assert decide(stats(host=[1100 * KIB] * 8), stats(host=[1000 * KIB] * 8)).verdict == NOT_CONFIRMED
    # with tensor meters, the tensor bytes decide, not the host level
    assert decide(stats(live=[0] * 8, host=[986 * KIB] * 8), stats(live=[0] * 8, host=[3 * KIB] * 8)).verdict == NOT_CONFIRMED
