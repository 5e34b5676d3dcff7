"""From measured series to a verdict: pure arithmetic, no torch, so it is tested on its own.

A variant is one loop body (leaky or fixed) run ``warmup + iterations`` times. Growth is the
*median* per-iteration change of live bytes after the warm-up, so a one-off lazy buffer (an
optimizer's state, a cache filled on the first call) does not read as a leak, while a leak, which
adds about the same every step, does.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Sequence

from leaklint.findings import Severity

#: Growth below this many bytes per iteration is flat, whatever the fixed variant allocates.
MIN_GROWTH = 4096.0
#: ... and below this share of the bytes the fixed variant allocates per iteration.
GROWTH_SHARE = 0.02
#: Host memory must grow at least this much more per iteration than the fixed variant's.
MIN_HOST_GROWTH = 1024.0
#: A leaky peak (or bytes held between steps) this many times the fixed one is a peak finding.
PEAK_RATIO = 1.25
#: Without a tensor meter (a TensorFlow repro), what the host meter still holds after the leaky
#: variant's last step must exceed the fixed one's by this much (and PEAK_RATIO times) to be a
#: peak: memory kept from one step into the next, measured on the host.
MIN_HOST_HELD = 64 * 1024.0
#: A leaky step this many times slower than the fixed one is a perf finding...
PERF_RATIO = 1.5
#: ... when it is also this many seconds slower: below that, a step's time is the timer's and the
#: scheduler's noise (a tiny step doubles when the process is preempted once).
MIN_SLOWDOWN = 1e-4

GROWTH = "growth confirmed"
HOST_GROWTH = "host growth confirmed"
PEAK = "peak confirmed"
PERF = "perf confirmed"
NOT_CONFIRMED = "not confirmed"

#: The verdicts that prove each severity.
PROVES: dict[Severity, tuple[str, ...]] = {
    Severity.LEAK: (GROWTH, HOST_GROWTH),
    Severity.PEAK: (PEAK,),
    Severity.PERF: (PERF,),
}


def _judged_readings(series: Sequence[float], warmup: int) -> list[float]:
    """The readings growth is judged on: from the last warm-up reading on (or from zero)."""
    return list(series[max(warmup - 1, 0):]) if warmup else [0.0, *series]


def growth_per_iteration(live: Sequence[float], warmup: int) -> float:
    """Median change of ``live`` (bytes at the end of each iteration) after ``warmup`` iterations."""
    measured = _judged_readings(live, warmup)
    deltas = [b - a for a, b in zip(measured, measured[1:])]
    return statistics.median(deltas) if deltas else 0.0


def steady_growth(series: Sequence[float], warmup: int) -> float:
    """Growth per step of a program measured between boundaries it chooses itself: the
    Theil-Sen slope of the readings after the warm-up (the median of the slopes between every two
    of them). A leak's steady climb gives its rate, as the median change does; but steps of
    unequal work (a generation of 16 tokens, then one of 2) swing the heap up and down, and a
    median of swings is half a swing, while the median slope is the drift under them. A one-off
    jump (a lazily built buffer) moves few of the slopes, and a leak every other step reads as
    half its size rather than as nothing."""
    measured = _judged_readings(series, warmup)
    slopes = [(measured[j] - measured[i]) / (j - i) for i in range(len(measured)) for j in range(i + 1, len(measured))]
    return statistics.median(slopes) if slopes else 0.0


@dataclass(frozen=True)
class VariantStats:
    """What one variant measured; byte counts are relative to the live bytes before its first step.

    ``live`` holds the tensor bytes alive at the end of every iteration (warm-up included),
    ``peaks`` the highest tensor bytes within each, ``allocated`` the bytes allocated in each;
    ``host`` the host-meter reading at the end of each iteration (empty when no host meter ran);
    ``seconds`` the wall time of each step.
    """

    live: tuple[float, ...] = ()
    peaks: tuple[float, ...] = ()
    allocated: tuple[float, ...] = ()
    host: tuple[float, ...] = ()
    seconds: tuple[float, ...] = ()
    warmup: int = 0

    def _after_warmup(self, series: Sequence[float]) -> list[float]:
        return list(series[self.warmup:]) or list(series)

    @property
    def growth(self) -> float:
        return growth_per_iteration(self.live, self.warmup) if self.live else 0.0

    @property
    def host_growth(self) -> float | None:
        return growth_per_iteration(self.host, self.warmup) if self.host else None

    @property
    def peak(self) -> float:
        return max(self._after_warmup(self.peaks), default=0.0)

    @property
    def held(self) -> float:
        return self.live[-1] if self.live else 0.0

    @property
    def host_held(self) -> float | None:
        """The host meter's reading after the last step: host bytes still held (None without a
        host meter)."""
        return self.host[-1] if self.host else None

    @property
    def allocated_per_iteration(self) -> float:
        return statistics.median(self._after_warmup(self.allocated)) if self.allocated else 0.0

    @property
    def seconds_per_iteration(self) -> float:
        return statistics.median(self._after_warmup(self.seconds)) if self.seconds else 0.0

    @property
    def fastest_step(self) -> float:
        return min(self._after_warmup(self.seconds)) if self.seconds else 0.0


@dataclass(frozen=True)
class Verdict:
    """The measured verdict and the thresholds it was judged by."""

    verdict: str
    growth_threshold: float
    reasons: tuple[str, ...] = field(default=())

    def proves(self, severity: Severity) -> bool:
        return self.verdict in PROVES[Severity(severity)]


def growth_threshold(fixed: VariantStats) -> float:
    return max(MIN_GROWTH, GROWTH_SHARE * fixed.allocated_per_iteration)


def _ratio(leaky: float, fixed: float, floor: float) -> bool:
    """``leaky`` is at least PEAK_RATIO times ``fixed`` and above it by more than noise."""
    return leaky - fixed >= floor and leaky >= PEAK_RATIO * fixed


def _held_on_host(leaky: VariantStats, fixed: VariantStats) -> bool:
    """Measured without tensor meters, the leaky variant still holds :data:`MIN_HOST_HELD` more
    on the host after its last step than the fixed one (and :data:`PEAK_RATIO` times as much): it
    keeps one step's memory into the next, as a persistent tape kept by an object does."""
    held_l, held_f = leaky.host_held, fixed.host_held
    return held_l is not None and held_f is not None and _ratio(held_l, max(held_f, 0.0), MIN_HOST_HELD)


def decide(leaky: VariantStats, fixed: VariantStats) -> Verdict:
    """The strongest verdict the two variants support, strongest first: growth, host growth, peak,
    perf. Nothing is confirmed when the fixed variant's tensor bytes grow."""
    threshold = growth_threshold(fixed)
    leaky_grows, fixed_grows = leaky.growth >= threshold, fixed.growth >= threshold
    if fixed_grows:
        # A "fix" that still grows proves nothing: no peak or time comparison with it counts either.
        return Verdict(NOT_CONFIRMED, threshold, ("the fixed variant grows too",))
    if leaky_grows:
        return Verdict(GROWTH, threshold)
    host_l, host_f = leaky.host_growth, fixed.host_growth
    if host_l is not None and host_f is not None:
        if host_l - host_f >= MIN_HOST_GROWTH and host_l >= MIN_HOST_GROWTH:
            return Verdict(HOST_GROWTH, threshold)
    if _ratio(leaky.peak, fixed.peak, threshold) or _ratio(leaky.held, fixed.held, threshold):
        return Verdict(PEAK, threshold)
    if not leaky.live and _held_on_host(leaky, fixed):
        return Verdict(PEAK, threshold)
    slow, fast = leaky.seconds_per_iteration, fixed.seconds_per_iteration
    # Noise only ever adds time: the slowdown must show in every leaky step (its fastest one is
    # still slower than a typical fixed step), not only in the ones the machine disturbed.
    if fast > 0 and slow >= PERF_RATIO * fast and slow - fast >= MIN_SLOWDOWN and leaky.fastest_step > fast:
        return Verdict(PERF, threshold)
    return Verdict(NOT_CONFIRMED, threshold)
