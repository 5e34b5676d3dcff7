"""Runs a rule's repro: each variant in fresh state, once under the tensor meter and once under the
host meter and the clock (so neither meter's own cost shows up in the other's numbers)."""

from __future__ import annotations

import gc
import random
import time
from dataclasses import dataclass
from typing import Callable, Sequence

from leaklint.findings import Severity
from leaklint.runtime.host_meter import make_host_meter
from leaklint.runtime.repro import Context, Repro, install_hint
from leaklint.runtime.tensor_meter import make_meter
from leaklint.runtime.verdict import NOT_CONFIRMED, VariantStats, decide

CONFIRMED = "confirmed"
UNCONFIRMED = "not confirmed"
SKIPPED = "skipped"
ERROR = "error"
NO_REPRO = "no repro"
#: Statuses that do not fail ``leaklint verify``: a repro whose optional framework (tensorflow) is
#: not installed. A missing psutil or matplotlib is an ``error``: ``leaklint-ml[runtime]`` has them.
NOT_FAILURES = (CONFIRMED, SKIPPED)


@dataclass(frozen=True)
class RuleResult:
    """One rule's outcome; ``leaky``/``fixed`` are None when the repro did not run."""

    code: str
    name: str
    severity: Severity
    device: str
    status: str
    verdict: str
    reason: str = ""
    host_meter: str | None = None
    leaky: VariantStats | None = None
    fixed: VariantStats | None = None
    seconds: float = 0.0

    @property
    def failed(self) -> bool:
        return self.status not in NOT_FAILURES


def resolve_device(device: str) -> str:
    """``auto`` is ``cuda`` when torch sees a GPU, else ``cpu``."""
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("--device cuda: torch sees no CUDA device")
    return device


def _fresh(repro: Repro, device: str) -> Context:
    gc.collect()
    random.seed(0)
    if "torch" in repro.requires:
        import torch

        torch.manual_seed(0)
    ctx = Context(device=device)
    repro.setup(ctx)
    return ctx


def _tensor_pass(repro: Repro, step_name: str, device: str, total: int) -> tuple[list[float], list[float], list[float]]:
    ctx = _fresh(repro, device)
    step: Callable[[Context], None] = getattr(repro, step_name)
    meter = make_meter(device)
    meter.start()
    try:
        for index in range(total):
            with meter.iteration(index):
                step(ctx)
    finally:
        series = meter.stop()
        repro.teardown(ctx)
    return series.live, series.peaks, series.allocated


def _host_pass(repro: Repro, step_name: str, device: str, total: int, meter_name: str | None) -> tuple[list[float], list[float]]:
    ctx = _fresh(repro, device)
    step: Callable[[Context], None] = getattr(repro, step_name)
    meter = make_host_meter(meter_name) if meter_name else None
    host: list[float] = []
    seconds: list[float] = []
    sync = _synchronize(device)
    if meter is not None:
        meter.start()
    try:
        base = meter.read() if meter is not None else 0.0
        for _ in range(total):
            began = time.perf_counter()
            step(ctx)
            sync()
            seconds.append(time.perf_counter() - began)
            if meter is not None:
                host.append(meter.read() - base)
    finally:
        if meter is not None:
            meter.stop()
        repro.teardown(ctx)
    return host, seconds


def _synchronize(device: str) -> Callable[[], None]:
    if device.startswith("cuda"):
        import torch

        return torch.cuda.synchronize
    return lambda: None


def measure_variant(repro: Repro, step_name: str, device: str, iterations: int, warmup: int, host_meter: str | None) -> VariantStats:
    """Run one variant ``warmup + iterations`` times under each meter."""
    total = warmup + iterations
    live: list[float] = []
    peaks: list[float] = []
    allocated: list[float] = []
    if repro.tensors:
        live, peaks, allocated = _tensor_pass(repro, step_name, device, total)
    host, seconds = _host_pass(repro, step_name, device, total, host_meter)
    return VariantStats(tuple(live), tuple(peaks), tuple(allocated), tuple(host), tuple(seconds), warmup)


def verify_rule(rule: type, device: str, iterations: int = 12, warmup: int = 3) -> RuleResult:
    """Measure ``rule``'s repro and judge it against the severity the rule claims."""
    began = time.perf_counter()
    severity = Severity(rule.severity)
    base = dict(code=rule.code, name=rule.name, severity=severity)
    repro_class = getattr(rule, "Repro", None)
    if repro_class is None or not getattr(rule, "has_repro", lambda: True)():
        return RuleResult(**base, device="-", status=NO_REPRO, verdict=NOT_CONFIRMED, reason="the rule has no runtime repro")
    frameworks, dependencies = repro_class.missing_frameworks(), repro_class.missing_dependencies()
    if frameworks:
        return RuleResult(**base, device="-", status=SKIPPED, verdict="skipped", reason=f"{', '.join(frameworks)} not installed")
    if dependencies:
        hints = " and ".join(dict.fromkeys(install_hint(name) for name in dependencies))
        return RuleResult(
            **base, device="-", status=ERROR, verdict=NOT_CONFIRMED,
            reason=f"{', '.join(dependencies)} not installed: {hints}",
        )
    repro = repro_class()
    run_on = device if repro.tensors else "cpu"
    meter_name: str | None = repro.host_meter
    reason = ""
    unavailable = make_host_meter(meter_name).unavailable() if meter_name else None
    if unavailable:
        meter_name, reason = None, unavailable
    try:
        leaky = measure_variant(repro, "leaky", run_on, iterations, warmup, meter_name)
        fixed = measure_variant(repro, "fixed", run_on, iterations, warmup, meter_name)
    except Exception as error:  # a repro that crashes is reported, not fatal to the others
        return RuleResult(**base, device=run_on, status=ERROR, verdict=NOT_CONFIRMED, reason=f"{type(error).__name__}: {error}")
    judged = decide(leaky, fixed)
    status = CONFIRMED if judged.proves(severity) else UNCONFIRMED
    if status == UNCONFIRMED:
        wanted = {"leak": "growth", "peak": "a higher peak", "perf": "a slower step"}[severity.value]
        claim = f"the rule claims {severity.value} ({wanted}); measured: {judged.verdict}"
        if judged.reasons:
            claim += f" ({'; '.join(judged.reasons)})"
        reason = f"{claim}; {reason}" if reason else claim
    return RuleResult(
        **base, device=run_on, status=status, verdict=judged.verdict, reason=reason, host_meter=meter_name,
        leaky=leaky, fixed=fixed, seconds=time.perf_counter() - began,
    )


def verify_rules(
    rules: Sequence[type],
    device: str = "auto",
    iterations: int = 12,
    warmup: int = 3,
    progress: Callable[[str], None] | None = None,
) -> list[RuleResult]:
    """Verify each rule in turn; ``progress`` hears one line before and after each."""
    import torch

    run_on = resolve_device(device)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # repros are small: more threads only add scheduling noise to the clock
    results = []
    try:
        for number, rule in enumerate(rules, 1):
            if progress:
                progress(f"[{number}/{len(rules)}] {rule.code} {rule.name} ...")
            result = verify_rule(rule, run_on, iterations, warmup)
            if progress:
                outcome = result.verdict if result.status == CONFIRMED else result.reason or result.verdict
                progress(f"[{number}/{len(rules)}] {rule.code} {result.status}: {outcome} ({result.seconds:.1f} s)")
            results.append(result)
    finally:
        torch.set_num_threads(threads)
    return results
