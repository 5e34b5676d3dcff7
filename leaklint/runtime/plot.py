"""``leaklint verify --plot FILE.png``: one panel per rule, leaky vs fixed over the iterations.

Each panel draws the series its verdict is about (for a rule not confirmed, the one its severity
claims): live tensor bytes for growth, the host meter's bytes for host growth, the peak within
each iteration for a peak (or the bytes held between iterations, when that is where the
difference is), the time of each step for perf. The axis names the quantity and its unit, in
plain numbers (no matplotlib offset such as ``+1.8e2``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from leaklint.runtime.driver import RuleResult
from leaklint.runtime.verdict import GROWTH, HOST_GROWTH, PEAK, PEAK_RATIO, PERF, VariantStats

if TYPE_CHECKING:
    from leaklint.runtime.run import RunResult

_BYTE_UNITS = (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024), ("B", 1))


def focus(result: RuleResult) -> str:
    """What the panel shows: ``live``, ``host``, ``peak``, ``held`` or ``time``."""
    leaky, fixed = result.leaky, result.fixed
    assert leaky is not None and fixed is not None
    verdict = result.verdict
    if verdict not in (GROWTH, HOST_GROWTH, PEAK, PERF):
        claimed = result.severity.value
        if claimed == "leak":
            verdict = GROWTH if leaky.live else HOST_GROWTH
        else:
            verdict = PEAK if claimed == "peak" else PERF
    if verdict == GROWTH and not leaky.live:
        verdict = HOST_GROWTH
    if verdict == HOST_GROWTH:
        return "host" if leaky.host else "time"
    if verdict == PEAK:
        if not leaky.live:
            return "host" if leaky.host else "time"
        peak_ratio = leaky.peak / fixed.peak if fixed.peak > 0 else float("inf")
        held_ratio = leaky.held / fixed.held if fixed.held > 0 else float("inf")
        return "held" if peak_ratio < PEAK_RATIO <= held_ratio else "peak"
    if verdict == PERF:
        return "time"
    return "live"


def _values(stats: VariantStats, shown: str) -> list[float]:
    if shown == "host":
        return list(stats.host)
    if shown == "peak":
        return list(stats.peaks)
    if shown == "time":
        return [seconds * 1e3 for seconds in stats.seconds]
    return list(stats.live)  # live and held: live bytes at the end of each iteration


def _label(result: RuleResult, shown: str, unit: str) -> str:
    return {
        "live": f"live tensor memory ({unit})",
        "held": f"tensor memory held between steps ({unit})",
        "peak": f"peak tensor memory in the step ({unit})",
        "host": f"host memory, {result.host_meter} ({unit})",
        "time": "time per step (ms)",
    }[shown]


def _byte_unit(values: Sequence[float]) -> tuple[str, int]:
    largest = max((abs(v) for v in values), default=0.0)
    return next(((name, scale) for name, scale in _BYTE_UNITS if largest >= scale), ("B", 1))


def plot_results(results: Sequence[RuleResult], path: str) -> None:
    """Draw every measured rule into ``path``; raises ImportError when matplotlib is missing."""
    draw(results).savefig(path, dpi=110)


def draw(results: Sequence[RuleResult]):  # type: ignore[no-untyped-def]
    """The figure: a panel per measured rule, three to a row."""
    from matplotlib.figure import Figure

    measured = [r for r in results if r.leaky is not None and r.fixed is not None]
    columns = 3
    rows = max(1, -(-len(measured) // columns))
    figure = Figure(figsize=(4.2 * columns, 2.8 * rows), layout="constrained")
    axes = figure.subplots(rows, columns, squeeze=False).ravel()
    for ax, result in zip(axes, measured):
        assert result.leaky is not None and result.fixed is not None
        shown = focus(result)
        series = {label: _values(stats, shown) for label, stats in (("leaky", result.leaky), ("fixed", result.fixed))}
        unit, scale = ("ms", 1) if shown == "time" else _byte_unit([v for values in series.values() for v in values])
        for (label, values), style in zip(series.items(), ("-o", "--s")):
            ax.plot([v / scale for v in values], style, label=label, markersize=2.5, linewidth=1.2)
        everything = [v for values in series.values() for v in values]
        positive = [v for v in everything if v > 0]
        if shown == "time" and positive and max(positive) / min(positive) > 50:
            ax.set_yscale("log")  # a step 300x slower would flatten the fixed line into the axis
        else:
            ax.ticklabel_format(axis="y", style="plain", useOffset=False)
            if everything and min(everything) >= 0:
                # From zero, so a 1.3x peak does not look like 10x; headroom above for the legend.
                ax.set_ylim(bottom=0, top=max(max(everything) / scale * 1.25, 1))
        ax.axvline(result.leaky.warmup - 0.5, color="grey", linewidth=0.8, linestyle=":")
        ax.set_title(f"{result.code} {result.name}\n{result.verdict}", fontsize=8)
        ax.set_xlabel("iteration (dotted: end of warm-up)", fontsize=7)
        ax.set_ylabel(_label(result, shown, unit), fontsize=7)
        ax.tick_params(labelsize=6)
        ax.legend(fontsize=6)
    for ax in axes[len(measured):]:
        ax.set_axis_off()
    return figure


def plot_run(result: "RunResult", path: str, top: int = 3) -> None:
    """``leaklint run --plot FILE.png``: memory per measured step (host heap outside tensors, then
    live tensor bytes), the growing allocation sites named in the legend. Raises ImportError
    without matplotlib."""
    draw_run(result, top).savefig(path, dpi=110)


def draw_run(result: "RunResult", top: int = 3):  # type: ignore[no-untyped-def]
    from matplotlib.figure import Figure

    from leaklint.runtime.units import format_bytes

    report = result.report
    figure = Figure(figsize=(9, 3.4), layout="constrained")
    host_ax, tensor_ax = figure.subplots(1, 2)
    first = result.warmup
    panels = ((host_ax, report.host, "host heap outside tensors" if report.device == "cuda" else "host heap (tensors included)", first),
              (tensor_ax, report.live, f"live {report.device} tensor memory", first + max(len(report.host) - 1, 0)))
    for ax, values, name, start in panels:
        unit, scale = _byte_unit(values)
        steps = list(range(start, start + len(values)))
        ax.plot(steps, [v / scale for v in values], "-o", markersize=2.5, linewidth=1.2)
        ax.ticklabel_format(axis="y", style="plain", useOffset=False)
        ax.set_xlabel("step", fontsize=7)
        ax.set_ylabel(f"{name} ({unit}), from its first reading", fontsize=7)
        ax.tick_params(labelsize=6)
        if not values:
            ax.text(0.5, 0.5, "not measured", ha="center", va="center", transform=ax.transAxes, fontsize=8)
    grows = [f"{format_bytes(site.bytes)}/step at {site.where}" for site in report.sites[:top]]
    tensor_ax.set_title("growing sites: " + ("; ".join(grows) if grows else "none"), fontsize=7, wrap=True)
    verdict = "grows" if report.grows else "stays flat"
    host_ax.set_title(f"{result.script}: {verdict} ({result.boundary} boundaries)", fontsize=8)
    return figure
