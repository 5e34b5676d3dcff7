"""LL303 figure-not-closed: pyplot figures created every iteration and never closed."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Iterator

import libcst as cst

from leaklint.analysis.calls import call_graph, constructions
from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.iterations import few_runs
from leaklint.analysis.names import dotted_name, dotted_names_in
from leaklint.analysis.provenance import StatementFact
from leaklint.analysis.steps import is_framework_hook
from leaklint.analysis.structure import FunctionInfo, LoopInfo, bound_names
from leaklint.analysis.walk import not_into_scopes, walk
from leaklint.findings import Confidence, Severity
from leaklint.gate import Names, Words
from leaklint.rule import Measured, Rule, Violation

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
    needs = Words("matplotlib", "pyplot", "seaborn", "pylab") & Names(*{creator.rsplit(".", 1)[-1] for creator in FIGURE_CREATORS})
    #: bench/realcode, both corpora (true, false, debatable), and bench/leaks (true, false), written by bench/measured.py --write.
    measured = Measured(realcode=(4, 0, 3), leaks=(4, 0))
    docs = """
## What it finds
A new pyplot figure — `plt.figure()`, `plt.subplots()`, `plt.subplot_mosaic()`, or a seaborn
figure-level plot (`sns.pairplot`, `sns.FacetGrid`...) — created

- inside a loop, when nothing in that loop closes it (`plt.close(fig)`, `plt.close()`,
  `plt.close("all")`, or TensorBoard's `writer.add_figure(...)`, which closes by default);
- in a helper (a `plot_confusion_matrix`, a `log_samples`) that neither closes nor returns the
  figure, when the helper is called in a loop of the same file, or is a hook a framework calls every
  step or epoch (`on_validation_epoch_end`, `on_epoch_end`...);
- in a class's constructor that keeps it on the object (`self.figure = plt.figure()`), when the
  class is built in such a loop or helper and no method of the class closes figures;
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
not reported; neither are `matplotlib.figure.Figure(...)` objects, figures passed to `add_figure`,
figures a helper returns (or collects into a list it returns: `figures.append(make_figure(g))`
... `return figures`; their caller is judged instead), figures an object keeps on itself when a
method of its class closes them (`def close(self): plt.close(self.figure)`), nor
a helper's per-item loop when every caller in the file closes the figures after calling it.
`plt.show()` counts as a close: a notebook's inline backend closes every figure it displays, and
an interactive window is gone once the user closes it. In a notebook, figures a cell only displays (nothing
in the code that makes them writes or logs a figure: `savefig`, `log_figure`, `log_image`,
`wandb.Image(fig)`, `mlflow.log_figure`) are the cell's output: the inline backend shows and
closes them when the cell ends, so they are reported with low confidence only; figures a cell
saves in a loop still pile up while it runs. On a headless backend (`Agg`) `show()`
does nothing and the figures stay open: that leak is not reported. Loops the code bounds to at
most 20 iterations in all (`for batch in dataset.take(1):`, `for i in range(4):`, a name bound to
a number (`num_to_plot = 5`), a parameter every call in the file sets to one, `random.sample(paths,
k=3)`, the rows of `df.head()`, or a counter that breaks the loop: `i += 1; if i % 4 == 0: break`
over an endless `datagen.flow(...)`) open a handful of figures, which pyplot itself tolerates (it warns from 20), and are not reported. A close that
happens in another function (a logger that closes the figures it is given) is not seen: suppress
with `# noqa: LL303`.

On bench/realcode the true findings are helpers called once per environment, attention head,
epoch or input image that save a figure and never close it (a legend exported per environment and
only `clf()`-ed, attention maps saved per head, a 15 x 15-inch sample figure per epoch of a
1000-epoch run, feature maps per image and layer). The debatable ones open a few figures in a
script that exits right after (one per layer named on the command line, 10 saved examples), or
sit in a helper the notebook never calls. The false positives at first, mostly notebooks whose
inline backend shows and closes a handful of figures at the end of the cell (loops over
`dataset.take(1)`, `random.sample(..., k=3)`, four images from an endless generator stopped by a
counter), and a figure closed by the helper it is passed to, are fixed.

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
        # the object keeps its figure and closes it in a method of its own
        """
import matplotlib.pyplot as plt
class LivePlot:
    def __init__(self, path):
        self.figure = plt.figure()
        self.path = path
    def update(self, values):
        self.figure.gca().plot(values)
        self.figure.savefig(self.path)
    def close(self):
        plt.close(self.figure)
for run in runs:
    live = LivePlot(run.path)
    train(run, live)
    live.close()
""",
        # figures collected into a list the helper returns: its caller owns them
        """
import matplotlib.pyplot as plt
def make_figure(values):
    fig = plt.figure()
    fig.gca().plot(values)
    return fig
def plot_groups(groups):
    figures = []
    for group in groups:
        figures.append(make_figure(group))
    return figures
""",
        # A helper that shows its figure: displayed, then let go.
        """
import matplotlib.pyplot as plt
def plot_samples(images):
    fig, axes = plt.subplots(1, len(images))
    for ax, image in zip(axes, images):
        ax.imshow(image)
    plt.show()
for epoch in range(100):
    plot_samples(generator.sample(4))
""",
        # An endless generator stopped by a counter after four images: four figures.
        """
import matplotlib.pyplot as plt
i = 0
for batch in datagen.flow(x, batch_size=1):
    plt.figure(i)
    plt.imshow(batch[0])
    i += 1
    if i % 4 == 0:
        break
plt.show()
""",
        # One batch from the dataset: one figure.
        """
import matplotlib.pyplot as plt
for images, labels in train_dataset.take(1):
    plt.figure(figsize=(10, 10))
    plt.imshow(images[0])
""",
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
        # a handful of figures, however the bound is written: a name, a parameter every call
        # sets, a random sample of k items, the rows of df.head()
        """
import random
import matplotlib.pyplot as plt

def plot_transformed(paths, transform, n=3):
    for path in random.sample(paths, k=n):
        fig, ax = plt.subplots(1, 2)
        ax[0].imshow(path)
        ax[1].imshow(transform(path))

plot_transformed(image_paths, transform=augment, n=3)

num_to_plot = 5
for i in range(num_to_plot):
    plt.figure()
    plt.imshow(test_data[i][0].squeeze())

for _, row in predictions.sort_values(by="loss").head().iterrows():
    plt.figure()
    plt.title(row["label"])
""",
        # A local helper that closes the figure it is given (plot_to_image ends with
        # plt.close(figure)): calling it in the loop closes the figure
        """
import io
import matplotlib.pyplot as plt
import tensorflow as tf
def plot_to_image(figure):
    buf = io.BytesIO()
    plt.savefig(buf, format="png")
    plt.close(figure)
    buf.seek(0)
    return tf.expand_dims(tf.image.decode_png(buf.getvalue(), channels=4), 0)
def image_grid(images):
    figure = plt.figure(figsize=(10, 10))
    for i in range(25):
        plt.subplot(5, 5, i + 1)
        plt.imshow(images[i], cmap=plt.cm.binary)
    return figure
def train(model, dataset, writer, epochs):
    for step, (x, y) in enumerate(dataset):
        model.train_on_batch(x, y)
        if step % 100 == 0:
            with writer.as_default():
                tf.summary.image("val-images", plot_to_image(image_grid(x[:25])), step=step)
""",
        # A list holding the step's figure is returned to Lightning, and the epoch-end hook
        # closes them all
        """
import matplotlib.pyplot as plt
import pytorch_lightning as pl
def match_figure(img0, img1):
    fig, axes = plt.subplots(1, 2)
    axes[0].imshow(img0)
    axes[1].imshow(img1)
    return fig
class Matcher(pl.LightningModule):
    def validation_step(self, batch, batch_idx):
        img0, img1 = batch
        figures = []
        if batch_idx % 50 == 0:
            figures = [match_figure(img0[0, 0].cpu().numpy(), img1[0, 0].cpu().numpy())]
        return {"figures": figures}
    def validation_epoch_end(self, outputs):
        for idx, fig in enumerate(fig for o in outputs for fig in o["figures"]):
            self.logger.experiment.add_figure(f"match/{idx}", fig, self.global_step, close=False)
        plt.close("all")
""",
    )
    INVALID = (
        # a figure made by a class's constructor, one object per session
        """
import matplotlib.pyplot as plt
class Grapher:
    def __init__(self, title):
        self.figure = plt.figure()  # expect: LL303
        self.figure.suptitle(title)
    def update(self, values):
        self.figure.gca().plot(values)
        self.figure.savefig("live.png")
def session(index):
    grapher = Grapher(f"session {index}")
    for step in range(100):
        grapher.update(run_step(step))
for index in range(1000):
    session(index)
""",
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
        # A helper that closes the figure only when asked, and is not asked
        """
import matplotlib.pyplot as plt


def save_plot(fig, path, close=False):
    fig.savefig(path)
    if close:
        plt.close(fig)


def train(model, loader, epochs):
    for epoch in range(epochs):
        for x, y in loader:
            model.train_on_batch(x, y)
        fig = plt.figure()  # expect: LL303
        plt.plot(model.history)
        save_plot(fig, f"epoch_{epoch}.png")  # close=False: the figure stays open
""",
        # A helper that closes only the figure it makes itself
        """
import matplotlib.pyplot as plt


def plot_losses(losses, path):
    f = plt.figure()
    plt.plot(losses)
    f.savefig(path)
    plt.close(f)  # closes only its own figure


def train(model, loader, epochs):
    losses = []
    for epoch in range(epochs):
        for x, y in loader:
            losses.append(model.train_on_batch(x, y))
        fig, ax = plt.subplots()  # expect: LL303
        ax.imshow(model.sample())
        fig.savefig(f"sample_{epoch}.png")  # this figure is never closed
        plot_losses(losses, "losses.png")
""",
    )

    def check(self, facts: ModuleFacts) -> Iterator[Violation]:
        return find_violations(facts)

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


# --- detection ------------------------------------------------------------------------------------
CLOSERS = frozenset({"matplotlib.pyplot.close", "pylab.close"})
_SHOW = frozenset({"matplotlib.pyplot.show", "pylab.show"})
#: ``writer.add_figure(tag, fig, step)`` (TensorBoard) closes the figure unless ``close=False``.
_CLOSING_METHODS = frozenset({"add_figure"})
#: Methods that frameworks call once per step or epoch (Lightning, Keras, HF and Ignite callbacks).
_MAX_CALL_DEPTH = 3
_STORES = frozenset({"append", "extend", "insert", "add"})


@dataclass(frozen=True)
class Creation:
    """A call that leaves a new open figure behind: a pyplot call, or a local figure factory."""

    call: cst.Call
    statement: StatementFact
    #: The local function whose returned figure this is (None: pyplot itself).
    factory: FunctionInfo | None = None


def find_violations(facts: ModuleFacts) -> Iterator[Violation]:
    """The violations in one file."""
    if not facts.imports.imports_anything_from("matplotlib", "pylab", "seaborn"):
        return
    analysis = _FigureAnalysis(facts)
    for creation in analysis.pyplot_creations():
        finding = analysis.judge(creation)
        if finding is not None:
            yield finding
    for creation in analysis.factory_calls():
        finding = analysis.judge(creation)
        if finding is not None:
            yield finding


class _FigureAnalysis:
    """Figure creations, closes and local call sites of one module."""

    def __init__(self, facts: ModuleFacts) -> None:
        self.facts = facts
        self._graph = call_graph(facts)
        self._closing_cache: dict[cst.CSTNode, bool] = {}
        self._factories: dict[FunctionInfo, bool] = {}
        self._creations: list[Creation] | None = None

    # --- what creates and what closes ---------------------------------------------------------
    def pyplot_creations(self) -> list[Creation]:
        if self._creations is None:
            self._creations = []
            for call, statement, _ in self._graph.resolved:
                qualified = self.facts.imports.resolve(call.func)
                if qualified in FIGURE_CREATORS and not _reuses_figure(call, qualified):
                    self._creations.append(Creation(call, statement))
        return self._creations

    def factory_calls(self) -> list[Creation]:
        """Calls of local functions that return a figure they created."""
        found = []
        for call, statement, callee in self._graph.resolved:
            if callee is not None and self.returns_figure(callee):
                found.append(Creation(call, statement, factory=callee))
        return found

    def returns_figure(self, function: FunctionInfo) -> bool:
        if function not in self._factories:
            self._factories[function] = False  # recursion guard
            self._factories[function] = self._returns_created_figure(function)
        return self._factories[function]

    def _returns_created_figure(self, function: FunctionInfo) -> bool:
        """The function returns a figure it created (with pyplot, or with another local factory)."""
        if function.node is None:
            return False
        for call, statement, callee in self._graph.resolved:
            if statement.function is not function:
                continue
            qualified = self.facts.imports.resolve(call.func)
            creates = qualified in FIGURE_CREATORS and not _reuses_figure(call, qualified)
            if not creates:
                creates = callee is not None and callee is not function and self.returns_figure(callee)
            if creates and self._returned_to_caller(Creation(call, statement)):
                return True
        return False

    def closes_within(self, scope: cst.CSTNode) -> bool:
        """Whether ``scope`` (a loop, a function body) contains a close of pyplot figures."""
        if scope not in self._closing_cache:
            self._closing_cache[scope] = any(
                isinstance(node, cst.Call) and self._is_close(node) for node in walk(scope, into=not_into_scopes)
            )
        return self._closing_cache[scope]

    def _is_close(self, call: cst.Call) -> bool:
        """A call that closes figures: ``plt.close(...)``, ``writer.add_figure(...)``, or
        ``plt.show()``, which displays them and (with a notebook's inline backend, or a window
        the user closes) lets them go."""
        if self.facts.imports.resolve(call.func) in CLOSERS | _SHOW:
            return True
        if isinstance(call.func, cst.Attribute) and call.func.attr.value in _CLOSING_METHODS:
            return not any(
                arg.keyword is not None and arg.keyword.value == "close" and _is_false(arg.value) for arg in call.args
            )
        callee = self._callees.get(call)
        # A local helper that closes what it is given (`plot_to_image(figure)` ends with
        # `plt.close(figure)`), or every figure: calling it closes them.
        return callee is not None and callee.node is not None and self._closes_what_it_is_given(callee.node)

    def _closes_what_it_is_given(self, helper: cst.FunctionDef) -> bool:
        """The helper's body itself (not a branch of it) runs ``plt.close(param)`` on one of its
        parameters, ``plt.close("all")`` or ``plt.close()``."""
        params = {param.name.value for param in (*helper.params.posonly_params, *helper.params.params, *helper.params.kwonly_params)}
        body = helper.body.body if isinstance(helper.body, cst.IndentedBlock) else ()
        for statement in body:
            if not isinstance(statement, cst.SimpleStatementLine):
                continue
            for small in statement.body:
                call = small.value if isinstance(small, cst.Expr) else None
                if not isinstance(call, cst.Call) or self.facts.imports.resolve(call.func) not in CLOSERS:
                    continue
                args = [arg.value for arg in call.args]
                if not args or dotted_name(args[0]) in params or (isinstance(args[0], cst.SimpleString) and args[0].evaluated_value == "all"):
                    return True
        return False

    @cached_property
    def _callees(self) -> dict[cst.Call, FunctionInfo]:
        return {call: callee for call, _, callee in self._graph.resolved if callee is not None}

    # --- local calls ------------------------------------------------------------------------------
    def call_sites(self, function: FunctionInfo) -> list[tuple[cst.Call, StatementFact]]:
        """Where ``function`` is called; for a constructor, where its class is instantiated
        (``SessionGrapher(...)`` runs ``SessionGrapher.__init__``)."""
        sites = list(self._graph.sites_of(function))
        cls = function.cls
        if function.name == "__init__" and cls is not None and function.parent is None:
            sites += constructions(self.facts, cls)
        return sites

    def repeated_by(self, function: FunctionInfo, depth: int = 0) -> str | None:
        """Why ``function`` runs again and again without its figures being closed: a loop around one of
        its calls, a caller that is itself repeated, or a framework hook name."""
        if is_framework_hook(function):
            return f"'{function.name}' is called by the framework every step or epoch"
        if depth >= _MAX_CALL_DEPTH:
            return None
        for _, statement in self.call_sites(function):
            caller = statement.function
            if statement.loops and _few_iterations(self.facts, statement.loops, caller):
                continue  # a handful of calls: a handful of figures
            if statement.loops:
                if not any(self.closes_within(loop.node) for loop in statement.loops):
                    return f"{_called(function)} in {self._loop_label(statement.loops[-1], caller)}"
                continue
            if caller.node is not None and self.closes_within(caller.node.body):
                continue
            why = self.repeated_by(caller, depth + 1) if caller.node is not None else None
            if why is not None:
                return f"{_called(function)} by '{caller.name}', and {why}"
        return None

    # --- the verdict ------------------------------------------------------------------------------
    def judge(self, creation: Creation) -> Violation | None:
        statement = creation.statement
        function = statement.function
        if statement.loops:
            return self._in_loop(creation, statement.loops)
        if function.node is None or self.closes_within(function.node.body):
            return None
        if self._handed_to_closer(creation) or self._returned_to_caller(creation) or self._closed_by_its_object(creation):
            return None
        why = self.repeated_by(function)
        if why is None:
            if self.call_sites(function) or function.name in ("main", "__main__"):
                return None  # called here, but not repeatedly
            message = (
                f"{self._what(creation)} in '{function.name}' is never closed or returned: every call leaves "
                "one more open figure in pyplot (no caller in this file)"
            )
            return self._violation(creation, message, Confidence.LOW)
        message = (
            f"{self._what(creation)} in '{function.name}' is never closed or returned, and {why}: "
            "pyplot keeps one more open figure per call"
        )
        return self._violation(creation, message, Confidence.MEDIUM)

    def _in_loop(self, creation: Creation, loops: tuple[LoopInfo, ...]) -> Violation | None:
        if any(self.closes_within(loop.node) for loop in loops) or _few_iterations(self.facts, loops, creation.statement.function):
            return None
        if self._handed_to_closer(creation) or self._returned_to_caller(creation):
            return None
        function = creation.statement.function
        closed_later = self.closes_within(self._body(function)) or self._closed_by_callers(function)
        iteration = any(loop.repeats_per_input for loop in loops)
        if closed_later and not iteration:
            return None  # a figure per item of a bounded loop, all closed afterwards
        if iteration and not closed_later and creation.factory is None:
            confidence = Confidence.HIGH
        else:
            confidence = Confidence.MEDIUM
        later = " (only closed after the loop)" if closed_later else ""
        message = (
            f"{self._what(creation)} is created on every iteration of {self._loop_label(loops[-1], function)} "
            f"and never closed{later}: pyplot keeps a reference to every open figure, so memory grows each iteration"
        )
        return self._violation(creation, message, confidence)

    def _closed_by_its_object(self, creation: Creation) -> bool:
        """``self.figure = plt.figure()``, and a method of the same class closes figures
        (``def close(self): plt.close(self.figure)``): the object owns the figure and lets it go."""
        function = creation.statement.function
        cls = function.cls
        names = _figure_names(creation.statement.node, creation.call)
        if cls is None or not any(name.startswith("self.") for name in names):
            return False
        return any(self.closes_within(method.body) for method in cls.methods.values())

    def _closed_by_callers(self, function: FunctionInfo) -> bool:
        """Every caller in the file closes figures after calling ``function`` (``plot_all(); plt.close("all")``)."""
        sites = self.call_sites(function) if function.node is not None else []
        return bool(sites) and all(self.closes_within(self._body(statement.function)) for _, statement in sites)

    def _body(self, function: FunctionInfo) -> cst.CSTNode:
        return self.facts.module if function.node is None else function.node.body

    def _handed_to_closer(self, creation: Creation) -> bool:
        """``writer.add_figure(tag, plt.figure(...))``: the creation is an argument of a closing call."""
        return any(
            isinstance(node, cst.Call) and node is not creation.call and self._is_close(node)
            and any(inner is creation.call for arg in node.args for inner in walk(arg.value))
            for node in walk(creation.statement.node, into=not_into_scopes)
        )

    def _returned_to_caller(self, creation: Creation) -> bool:
        """``return fig`` / ``return fig, ax`` / ``figs.append(fig)`` ... ``return figs``: the caller owns
        the figure (and closes it or not: its call is judged in turn)."""
        function = creation.statement.function
        if function.node is None:
            return False
        if isinstance(creation.statement.node, cst.Return):
            return True  # return plt.subplots(...)
        names = _figure_names(creation.statement.node, creation.call)
        holders = set(names) | _stored_directly_in(creation.statement.node, creation.call)
        if not holders:
            return False
        for node in walk(function.node.body, into=not_into_scopes):
            is_store = (
                isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in _STORES
            )
            if is_store and any(dotted_name(arg.value) in names for arg in node.args):
                holder = dotted_name(node.func.value)
                if holder is not None:
                    holders.add(holder)
        return any(
            isinstance(node, (cst.Return, cst.Yield))
            and node.value is not None
            and bool(dotted_names_in(node.value) & holders)
            for node in walk(function.node.body, into=not_into_scopes)
        )

    def _what(self, creation: Creation) -> str:
        if creation.factory is not None:
            return f"the figure returned by '{creation.factory.name}'"
        return f"the figure from '{self.facts.describe(creation.call.func)}(...)'"

    def _loop_label(self, loop: LoopInfo, function: FunctionInfo) -> str:
        line = self.facts.line_of(loop.node)
        where = f" at line {line}" if line is not None else ""
        kind = "the epoch/data loop" if loop.repeats_per_input else "the loop"
        return f"{kind}{where} of {_function_label(function)}"

    def _violation(self, creation: Creation, message: str, confidence: Confidence) -> Violation:
        if self.facts.notebook and not self._saves_figures(creation):
            # A notebook cell's figures, only displayed: the inline backend shows and closes them
            # when the cell ends, so they pile up only while one cell runs (the output it shows).
            confidence = Confidence.LOW
            message += " (in a notebook the inline backend closes a cell's figures when the cell ends)"
        return Violation(node=creation.call, message=message, confidence=confidence, statement=creation.statement.line)

    def _saves_figures(self, creation: Creation) -> bool:
        """The function that makes the figure (or, for a figure factory, the factory), or a
        function of the file it calls, writes or logs figures (``savefig``, ``log_figure``,
        ``wandb.Image(fig)``): a side product kept while the cell runs, not its output."""
        functions = [creation.statement.function] + ([creation.factory] if creation.factory is not None else [])
        functions += [callee for function in list(functions) for _, callee in self._graph.callees_of(function)]
        for function in functions:
            for node in walk(self._body(function), into=not_into_scopes):
                if not isinstance(node, cst.Call):
                    continue
                if isinstance(node.func, cst.Attribute) and node.func.attr.value in _WRITES_FIGURES:
                    return True
                if self.facts.imports.resolve(node.func) in _LOGS_IMAGES:
                    return True
        return False


#: Methods that write a figure out or hand it to a logger.
_WRITES_FIGURES = frozenset({"savefig", "log_figure", "log_image"})
#: Logger constructors that take a figure.
_LOGS_IMAGES = frozenset({"wandb.Image", "mlflow.log_figure"})


def _reuses_figure(call: cst.Call, qualified: str) -> bool:
    """``plt.figure(1)``, ``plt.figure("loss")``, ``plt.subplots(num=2, clear=True)``: one figure, reused."""
    for position, arg in enumerate(call.args):
        if arg.star:
            continue
        if arg.keyword is not None:
            is_num = arg.keyword.value == "num"
        else:
            is_num = position == 0 and qualified.endswith(".figure")  # figure(num, ...); subplots(nrows, ...)
        if is_num and isinstance(arg.value, (cst.Integer, cst.SimpleString, cst.ConcatenatedString)):
            return True
    return False


def _figure_names(statement: cst.BaseSmallStatement, call: cst.Call) -> set[str]:
    """Names bound to the new figure: ``fig`` in ``fig = plt.figure()`` / ``fig, ax = plt.subplots()``,
    ``figures`` in ``figures = [plot(...)]`` (a list of it)."""
    if not isinstance(statement, cst.Assign):
        return set()
    if isinstance(statement.value, (cst.List, cst.Tuple)) and any(element.value is call for element in statement.value.elements):
        return {name for target in statement.targets if isinstance(target.target, cst.Name) for name in bound_names(target.target)}
    if statement.value is not call:
        return set()
    names = set()
    for target in statement.targets:
        if isinstance(target.target, cst.Tuple):
            first = target.target.elements[0].value if target.target.elements else None
            names.update(bound_names(first) if first is not None else [])
        else:
            names.update(bound_names(target.target))
    return names


def _stored_directly_in(statement: cst.BaseSmallStatement, call: cst.Call) -> set[str]:
    """``figures`` in ``figures.append(plot(...))``: the container the new figure goes into."""
    if not isinstance(statement, cst.Expr) or not isinstance(statement.value, cst.Call):
        return set()
    store = statement.value
    if not (isinstance(store.func, cst.Attribute) and store.func.attr.value in _STORES):
        return set()
    if not any(arg.value is call for arg in store.args):
        return set()
    holder = dotted_name(store.func.value)
    return {holder} if holder else set()


def _is_false(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "False"


def _called(function: FunctionInfo) -> str:
    """How a call of ``function`` reads: "'plot' is called", "a 'Grapher' is built"."""
    if function.name == "__init__" and function.cls is not None:
        return f"a '{function.cls.name}' is built"
    return f"'{function.name}' is called"


def _function_label(function: FunctionInfo) -> str:
    return "the module" if function.is_module_level else f"'{function.name}'"


#: pyplot warns from this many open figures on (rcParams["figure.max_open_warning"]): loops whose
#: literals allow no more iterations than that open a handful of figures, not one per step.
_FEW_FIGURES = 20


def _few_iterations(facts: ModuleFacts, loops: tuple[LoopInfo, ...], scope: FunctionInfo) -> bool:
    """Whether nested ``loops`` (in ``scope``) run at most :data:`_FEW_FIGURES` times in all
    (``for batch in dataset.take(1):``, ``for i in range(4):``, ``for p in random.sample(paths,
    k=n)`` where every call passes ``n=3``: :mod:`leaklint.analysis.iterations`)."""
    return few_runs(facts, [loop.node for loop in loops], _FEW_FIGURES, scope)


