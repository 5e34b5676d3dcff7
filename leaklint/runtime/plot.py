"""``leaklint verify --plot FILE.png``: live bytes over the iterations, leaky vs fixed, one panel per rule."""

from __future__ import annotations

from typing import Sequence

from leaklint.runtime.driver import RuleResult


def plot_results(results: Sequence[RuleResult], path: str) -> None:
    """Draw every measured rule; raises ImportError when matplotlib is missing."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    measured = [r for r in results if r.leaky is not None and r.fixed is not None]
    columns = 3
    rows = max(1, -(-len(measured) // columns))
    figure = Figure(figsize=(4 * columns, 2.6 * rows), layout="constrained")
    axes = figure.subplots(rows, columns, squeeze=False).ravel()
    for ax, result in zip(axes, measured):
        for label, stats, style in (("leaky", result.leaky, "-"), ("fixed", result.fixed, "--")):
            series, unit = (stats.live, "tensor") if stats.live else (stats.host, result.host_meter or "host")
            ax.plot([value / 1024 for value in series], style, label=label)
        ax.axvline(result.leaky.warmup - 0.5, color="grey", linewidth=0.8)
        ax.set_title(f"{result.code} {result.name}\n{result.verdict}", fontsize=8)
        ax.set_xlabel("iteration", fontsize=7)
        ax.set_ylabel(f"{unit} KiB", fontsize=7)
        ax.tick_params(labelsize=6)
        ax.legend(fontsize=6)
    for ax in axes[len(measured):]:
        ax.set_axis_off()
    figure.savefig(path, dpi=110)
