"""LL303 figure-not-closed: pyplot figures created every iteration and never closed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from leaklint.findings import Confidence, Severity
from leaklint.rule import Rule, Violation

if TYPE_CHECKING:
    from leaklint.analysis.facts import ModuleFacts
    from leaklint.prefilter import SyntaxShape


#: pyplot functions that register a new figure with pyplot on every call (unless ``num`` names an
#: existing one), and seaborn's figure-level functions, which call them.
FIGURE_CREATORS = frozenset(
    {
        "matplotlib.pyplot.figure",
        "matplotlib.pyplot.subplots",
        "matplotlib.pyplot.subplot_mosaic",
        "pylab.figure",
        "pylab.subplots",
        "seaborn.pairplot",
        "seaborn.jointplot",
        "seaborn.clustermap",
        "seaborn.catplot",
        "seaborn.relplot",
        "seaborn.displot",
        "seaborn.lmplot",
        "seaborn.FacetGrid",
        "seaborn.PairGrid",
        "seaborn.JointGrid",
    }
)


class FigureNotClosed(Rule):
    code = "LL303"
    name = "figure-not-closed"
    severity = Severity.LEAK
    summary = "A pyplot figure is created every iteration (or every call of a helper run in a loop) and never closed."
    help = "close it when done: plt.close(fig) after savefig/logging (or plt.close('all') at the end of the iteration)"
    requires_any = ("matplotlib", "pyplot", "seaborn", "pylab")  # checked only in files importing them
    docs = """
## What it finds
A new pyplot figure — `plt.figure()`, `plt.subplots()`, `plt.subplot_mosaic()`, or a seaborn
figure-level plot (`sns.pairplot`, `sns.FacetGrid`...) — created

- inside a loop, when nothing in that loop closes it (`plt.close(fig)`, `plt.close()`,
  `plt.close("all")`, or TensorBoard's `writer.add_figure(...)`, which closes by default);
- in a helper (a `plot_confusion_matrix`, a `log_samples`) that neither closes nor returns the
  figure, when the helper is called in a loop of the same file, or is a hook a framework calls every
  step or epoch (`on_validation_epoch_end`, `on_epoch_end`...);
- by a local helper that returns the figure, when the caller runs it in a loop and never closes it.

A helper that leaves its figure open and has no caller in the file (a plotting utility module) is
reported with low confidence.

High confidence for a figure created directly in a training/data/epoch loop, or a loop that runs
the model on each of its items (`for img in images: pred = model(img)`, whatever the names), with no
close in the function; medium for the helper cases, for other loops (per class, per layer), and for
figures of such a loop that are only closed after the loop.

## Why it matters
pyplot keeps a reference to every figure it creates until `plt.close` deregisters it: `savefig`
does not, `fig.clf()` / `plt.clf()` only empty it, and dropping the last Python reference frees
nothing. A loss curve or confusion matrix drawn every epoch therefore keeps every figure, with its
canvas and image buffers, for the rest of training. Matplotlib warns after 20 ("More than 20
figures have been opened"); the process keeps growing after that.

## Example
```python
for epoch in range(args.epochs):
    train_one_epoch(model, loader, optimizer)
    fig, ax = plt.subplots()
    ax.plot(history)
    fig.savefig(f"loss_{epoch}.png")
```

## Use instead
```python
for epoch in range(args.epochs):
    train_one_epoch(model, loader, optimizer)
    fig, ax = plt.subplots()
    ax.plot(history)
    fig.savefig(f"loss_{epoch}.png")
    plt.close(fig)
```
Or draw on a `matplotlib.figure.Figure()` created directly: pyplot does not track it.

## Fix safety
No automatic fix: where to close the figure (after `savefig`, after logging it, or where the
caller of a helper is done with the returned figure) depends on where it is last used.

## Known false positives
`plt.figure(1)` / `plt.figure("loss")` / `plt.subplots(num=1, clear=True)` reuse one figure and are
not reported; neither are `matplotlib.figure.Figure(...)` objects, `plt.show()` outside loops,
figures passed to `add_figure`, figures a helper returns (or collects into a list it returns:
their caller is judged instead), nor a helper's per-item loop when every caller in the file closes
the figures after calling it. A `plt.show()` in the same loop closes the figure in interactive
sessions when the window is closed (but is a no-op on a headless backend): such loops are only
reported with low confidence. A close that happens in another function (a logger that closes the
figures it is given) is not seen: suppress with `# noqa: LL303`.

## References
- `matplotlib.pyplot.close` ("pyplot maintains a reference to figures created with figure() ...
  savefig() without show(), the figure must be deregistered explicitly using close()"):
  https://matplotlib.org/stable/api/_as_gen/matplotlib.pyplot.close.html
- The `figure.max_open_warning` rcParam behind the "More than 20 figures have been opened"
  warning: https://matplotlib.org/stable/users/explain/customizing.html
- TensorFlow Object Detection training leaking a CDF figure per summary:
  https://github.com/tensorflow/models/issues/3603
- Unclosed figures killing long training runs: https://github.com/AIS-Bonn/OCVP-object-centric-video-prediction/pull/3
- Runtime repro: `leaklint verify LL303` measures the leaky and the fixed loop body.
"""
    VALID = (
        """
import torch
import matplotlib.pyplot as plt

for epoch in range(10):
    fig, ax = plt.subplots()
    ax.plot([1, 2, 3])
    fig.savefig(f"epoch_{epoch}.png")
    plt.close(fig)
""",
        """
import torch
from matplotlib import pyplot as plt
from matplotlib.figure import Figure

def plot_confusion(cm):
    fig, ax = plt.subplots(figsize=(6, 6))
    ax.imshow(cm)
    return fig

def train(model, loader, writer, epochs):
    for epoch in range(epochs):
        for x, y in loader:
            model(x).sum().backward()
        writer.add_figure("confusion", plot_confusion(torch.zeros(3, 3)), epoch)
        fig = Figure()
        fig.add_subplot().plot([1, 2])
        fig.savefig("curve.png")
""",
        """
import torch
import matplotlib.pyplot as plt

def log_curve(history, path):
    plt.figure(num="loss", clear=True)
    plt.plot(history)
    plt.savefig(path)

for epoch in range(100):
    log_curve([1.0, 0.5], "loss.png")

history = []
plt.figure(figsize=(8, 4))
plt.plot(history)
plt.show()
""",
        """
import torch
import matplotlib.pyplot as plt

def save_samples(images, path):
    fig, axes = plt.subplots(4, 4)
    for ax, img in zip(axes.flat, images):
        ax.imshow(img)
    fig.savefig(path)
    plt.close("all")

for epoch in range(100):
    save_samples(torch.rand(16, 8, 8), f"samples_{epoch}.png")
""",
    )
    INVALID = (
        """
import torch
import matplotlib.pyplot as plt

def train(model, loader, optimizer, epochs):
    history = []
    for epoch in range(epochs):
        for x, y in loader:
            loss = model(x).sum()
            loss.backward()
            optimizer.step()
            history.append(loss.item())
        fig, ax = plt.subplots()  # expect: LL303
        ax.plot(history)
        fig.savefig(f"loss_{epoch}.png")
        fig.clf()
""",
        """
import torch
import matplotlib
import matplotlib.pyplot as plt

def plot_confusion(cm, path):
    plt.figure(figsize=(6, 6))  # expect: LL303
    plt.imshow(cm)
    plt.savefig(path)

def make_figure(values):
    fig = plt.figure()
    plt.plot(values)
    return fig

def main(model, loader, epochs):
    for epoch in range(epochs):
        cm = torch.zeros(10, 10)
        plot_confusion(cm.numpy(), f"cm_{epoch}.png")
        fig = make_figure([1, 2, 3])  # expect: LL303
        fig.savefig("values.png")
""",
        """
import torch
import seaborn as sns
import matplotlib.pyplot as plt
import pytorch_lightning as pl

class LitClassifier(pl.LightningModule):
    def on_validation_epoch_end(self):
        fig, ax = plt.subplots()  # expect: LL303
        sns.heatmap(self.confusion.compute().cpu().numpy(), ax=ax)
        self.logger.experiment.log({"confusion": fig})
""",
    )

    @classmethod
    def may_report(cls, shape: SyntaxShape, min_confidence: Confidence) -> bool:
        """Figures come from pyplot's and seaborn's figure-making functions."""
        return shape.uses(*{creator.rsplit(".", 1)[-1] for creator in FIGURE_CREATORS})

    def check(self, facts: ModuleFacts) -> Iterator[Violation]:
        from leaklint.rules.checks.ll303_figure_not_closed import check

        return check(facts)

    class Repro(Rule.Repro):
        """A pyplot figure created and plotted every epoch and never closed, vs `plt.close(fig)`."""

        requires = ("matplotlib",)
        tensors = False
        host_meter = "python"

        def setup(self, ctx):
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
            ctx.plt = plt
            ctx.warning = plt.rcParams["figure.max_open_warning"]
            plt.rcParams["figure.max_open_warning"] = 0
            ctx.history = [1.0 / (step + 1) for step in range(50)]

        def _draw(self, ctx):
            fig, ax = ctx.plt.subplots(figsize=(2, 2), dpi=50)
            ax.plot(ctx.history)
            return fig

        def leaky(self, ctx):
            self._draw(ctx)

        def fixed(self, ctx):
            ctx.plt.close(self._draw(ctx))

        def teardown(self, ctx):
            ctx.plt.close("all")
            ctx.plt.rcParams["figure.max_open_warning"] = ctx.warning
