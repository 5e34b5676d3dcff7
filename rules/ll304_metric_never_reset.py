"""LL304 metric-never-reset: a torchmetrics metric whose state piles up: updated step after step
and never reset, or built anew on every call and never reset."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator

import libcst as cst

from leaklint.analysis import percall_api, torch_api
from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.heavy import strip_returns_self
from leaklint.analysis.names import dotted_name
from leaklint.analysis.provenance import StatementFact
from leaklint.analysis.steps import repeated_functions
from leaklint.analysis.structure import ClassInfo, FunctionInfo, bound_names
from leaklint.analysis.walk import not_into_scopes, walk
from leaklint.findings import Confidence, Severity
from leaklint.gate import Names
from leaklint.rule import Measured, Rule, Violation


class MetricNeverReset(Rule):
    code = "LL304"
    name = "metric-never-reset"
    severity = Severity.LEAK
    summary = (
        "A torchmetrics metric is updated every step and never reset, or built anew every step, epoch or "
        "evaluation and never reset: its states pile up."
    )
    help = (
        "build the metric once (in __init__ or before the loop), and call metric.reset() after each "
        "compute(); in a LightningModule, log the metric object itself (self.log(name, metric)) and "
        "Lightning resets it every epoch"
    )
    #: Every finding is about a torchmetrics metric (imported from ``torchmetrics``) used in a function or a loop.
    needs = Names("torchmetrics") & torch_api.LOOPS_OR_FUNCTIONS
    #: bench/realcode, both corpora (true, false, debatable), and bench/leaks (true, false), written by bench/measured.py --write.
    measured = Measured(realcode=(0, 0, 0), leaks=(8, 0))
    docs = """
## What it finds
A `torchmetrics` metric (a class of `torchmetrics`, a class of the file deriving from one, or a
`MetricCollection`, `nn.ModuleDict`, dict or list of them) that is

- **updated again and again and never reset**: `metric.update(...)`, `metric.forward(...)` or
  `metric(preds, target)` (which updates the accumulated state too) runs in a loop over iterations or
  in a function that runs every step, epoch or evaluation (`training_step`, `validation_step`, a
  callback's `on_validation_batch_end`, a function called from the training loop), and no
  `reset()` is called on it anywhere in its scope (the class for `self.metric`, the function for a
  local). The finding points at the `compute()` of an epoch-end hook when the metric is computed
  apart from where it is updated (that is where the `reset()` belongs), else at the update; or
- **built anew on every call or iteration and never reset**: `Metric(...)` constructed inside a
  loop over iterations or in such a function, updated, and not reset before it is dropped. The
  finding points at the construction.

It stays quiet when the metric object itself is logged with Lightning's `self.log(name, metric)` /
`self.log_dict(...)` (Lightning computes and resets it at the end of the epoch), when it is
returned, passed to another call or stored under another name (that code may reset it), and when
members of a collection are reset through a loop (`for m in self.metrics.values(): m.reset()`).

Confidence: high for metrics whose state is a list that gets one tensor per update — curves and
ranking metrics (`AUROC`, `AveragePrecision`, `PrecisionRecallCurve`, `ROC` and their binary,
multiclass and multilabel forms without `thresholds=`), retrieval metrics, `CatMetric`,
`SpearmanCorrCoef`, detection `MeanAveragePrecision`, calibration error, the image metrics that keep
their inputs (`ErrorRelativeGlobalDimensionlessSynthesis`, `RelativeAverageSpectralError`,
`SpectralDistortionIndex`), `multidim_average="samplewise"`, image metrics asked for per-image values
or full maps (`PeakSignalNoiseRatio(dim=...)`, `reduction="none"` or `None` on
`StructuralSimilarityIndexMeasure`, its multi-scale form, `UniversalImageQualityIndex`,
`SpectralAngleMapper`, `TotalVariation`, and `return_full_image=True` /
`return_contrast_sensitivity=True` on SSIM) and the file's own metrics with
`add_state(name, default=[])`. Medium for metrics with fixed-size
states (`Accuracy`, `MeanMetric`, `JaccardIndex`...) built anew on every call or iteration and never
reset (each instance is a reference cycle that keeps its states until the cyclic collector runs),
and for those computed by a function that does not update them (an epoch-end hook) and never
reset: the value is meant per epoch, and the metric keeps its state and totals since it was built.
Low (hidden by default) for a fixed-size metric called for its per-batch value and never computed
apart (`self.log("acc", self.train_acc(preds, y))`): nothing grows. That holds when the inputs are
still attached to the autograd graph (a generator's output passed to `PeakSignalNoiseRatio` or
`StructuralSimilarityIndexMeasure` in a GAN's `training_step`): torchmetrics runs `update()` with
autograd off and merges the batch state of `forward()` under `torch.no_grad()`, so the accumulated
sums hold no graph (only the value returned for the batch, replaced at the next call, carries
`grad_fn`); detaching the inputs does not change what this rule reports. Such a finding points at
the call: every fix changes it (a `reset()` after it, or the functional form in its place).

## Why it matters
A list-state metric appends the predictions and targets of every update to its state, on the
metric's device, and only `reset()` empties it. Never reset, it keeps every batch since it was
built: GPU memory climbs all through training, and each `compute()` runs over everything seen so
far (slower, and the value mixes all epochs). A metric built anew each time is no better:
torchmetrics stores the wrapped `update` and `compute` on the instance, a reference cycle, so a
dropped metric is freed only when Python's cyclic collector runs, which counts Python objects,
not GPU bytes; until then its states stay allocated. torchmetrics' own guide on memory management
says to call `reset()` when done with a metric, because the garbage collector can struggle to free
the states of one that was not reset.

## Example
```python
class Tagger(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(300, 16)
        self.train_ap = AveragePrecision(task="multilabel", num_labels=16)

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self.net(x)
        self.train_ap.update(logits.sigmoid().detach(), y)
        if batch_idx % 100 == 0:
            self.log("train/ap", self.train_ap.compute())
        return nn.functional.binary_cross_entropy_with_logits(logits, y.float())
```

## Use instead
```python
    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self.net(x)
        self.train_ap.update(logits.sigmoid().detach(), y)
        if batch_idx % 100 == 0:
            self.log("train/ap", self.train_ap.compute())
            self.train_ap.reset()
        return nn.functional.binary_cross_entropy_with_logits(logits, y.float())
```
(or log the object, `self.log("train/ap", self.train_ap, on_epoch=True)`, and Lightning resets it.)

## Fix safety
No automatic fix: where a reset belongs (after each `compute()`, at the end of each epoch, or
never, for a metric meant to cover the whole run) depends on what the metric should measure.

## Known false positives
Measured on bench/realcode and on the library code of lightning,
accelerate, peft, timm, torch_geometric, torchmetrics and trl: no finding at the default confidence
(one, lightning's spike detector updating a `Running(MeanMetric(), window=n)` every batch, was false
until the rule learned that torchmetrics' `Running` wrapper keeps a sliding window: its state is
bounded and `compute()` covers the last `n` updates; other wrappers keep what their base keeps).
The low-confidence findings there (lightning's fine-tuning example, course notebooks, a speech
model's evaluation loop) are fixed-size metrics called for their per-batch value
(`self.log("acc", self.train_acc(preds, y))`) or built per evaluation, and never reset: no
memory grows, and they stay hidden unless `--min-confidence low`. Fixed-size metrics computed in an
epoch-end hook, or built per call, and never reset (medium): none on bench/realcode. Which states a
metric keeps is read from the current torchmetrics: `StructuralSimilarityIndexMeasure` kept every
prediction and target until torchmetrics 0.11 and keeps sums since, so code pinned to an older
release that calls it every step is rated low here though its memory grows. A metric reset by code the rule cannot see (a helper of another file that
receives the metric's owner, a framework that resets attributes by name) is reported; suppress it
with `# noqa: LL304`.

## References
- torchmetrics, "AUROC runs into memory issues" (the metric stores every state it is given):
  https://github.com/Lightning-AI/torchmetrics/issues/1461
- torchmetrics, "Retrieval Metrics GPU Memory Leak" (list states accumulate until reset):
  https://github.com/Lightning-AI/torchmetrics/issues/2481
- torchmetrics, "MAPE Memory Leak" (a fixed-size metric built every epoch and never reset):
  https://github.com/Lightning-AI/torchmetrics/issues/1160, and "Memory leak when creating multiple
  instances of the same metric": https://github.com/Lightning-AI/torchmetrics/issues/1949
- geo-deep-learning, "Torchmetrics memory leaks causing OOMs" (a class-wise IoU computed at each
  validation epoch's end, reset added as the fix): https://github.com/NRCan/geo-deep-learning/issues/582
- torchmetrics, "Docs on memory management" (reset a metric when done with it; reuse one instance):
  https://github.com/Lightning-AI/torchmetrics/pull/2006
- torchmetrics documentation, "TorchMetrics in PyTorch Lightning" (a logged metric object is reset at
  the end of the epoch): https://lightning.ai/docs/torchmetrics/stable/pages/lightning.html, and
  `torchmetrics.Metric` (`compute_on_cpu` for list states):
  https://lightning.ai/docs/torchmetrics/stable/api-reference/metric
- Runtime repro: `leaklint verify LL304` measures the leaky and the fixed loop body.
"""

    VALID = (
        # Lightning computes and resets a metric object it logs; a list-state metric reset by hand.
        """
import lightning.pytorch as pl
import torch.nn as nn
from torchmetrics import AUROC, Accuracy

class Classifier(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(32, 1)
        self.acc = Accuracy(task="binary")
        self.auroc = AUROC(task="binary")

    def training_step(self, batch, batch_idx):
        x, y = batch
        scores = self.net(x).squeeze(-1)
        self.acc(scores.sigmoid(), y)
        self.log("train/acc", self.acc, on_epoch=True)
        return nn.functional.binary_cross_entropy_with_logits(scores, y.float())

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.auroc.update(self.net(x).squeeze(-1).sigmoid(), y)

    def on_validation_epoch_end(self):
        self.log("val/auroc", self.auroc.compute())
        self.auroc.reset()
""",
        # Built per evaluation but reset before it is dropped; built by a factory for its caller.
        """
import torch
from torchmetrics.classification import BinaryAUROC

def make_metric(device):
    return BinaryAUROC().to(device)

def evaluate(model, loader, device):
    auroc = BinaryAUROC().to(device)
    with torch.no_grad():
        for x, y in loader:
            auroc.update(model(x.to(device)).squeeze(-1).sigmoid(), y.to(device))
    value = auroc.compute().item()
    auroc.reset()
    return value

def train(model, loader, valid, optimizer, device, epochs=10):
    for epoch in range(epochs):
        for x, y in loader:
            optimizer.zero_grad()
            model(x).sum().backward()
            optimizer.step()
        print(evaluate(model, valid, device))
""",
        # A collection whose members are reset in a loop; a fixed-size metric never reset (no
        # memory grows: low confidence only).
        """
import lightning.pytorch as pl
import torch.nn as nn
from torchmetrics import Accuracy, AveragePrecision

class Tagger(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(300, 16)
        self.metrics = nn.ModuleDict({"ap": AveragePrecision(task="multilabel", num_labels=16)})
        self.train_acc = Accuracy(task="multilabel", num_labels=16)

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self.net(x)
        self.metrics["ap"].update(logits.sigmoid().detach(), y)
        self.log("train/acc_step", self.train_acc(logits.sigmoid(), y))
        return nn.functional.binary_cross_entropy_with_logits(logits, y.float())

    def on_train_epoch_end(self):
        for name, metric in self.metrics.items():
            self.log(f"train/{name}", metric.compute())
            metric.reset()
""",
        # A sliding window (torchmetrics.wrappers.Running): bounded state, never reset on purpose
        # (lightning's SpikeDetection).
        """
import torch
from torchmetrics.aggregation import MeanMetric
from torchmetrics.wrappers import Running

class SpikeCheck:
    def __init__(self, window=10):
        self.running_mean = Running(MeanMetric(), window=window)

    @torch.no_grad()
    def on_train_batch_end(self, loss):
        if loss > 2 * self.running_mean.compute():
            raise RuntimeError("spike")
        self.running_mean.update(loss)
""",
        # Image metrics that keep sums (PSNR with no dim=, SSIM with its default reduction), called
        # on a generator's graph-attached output for the per-batch value and never reset: torchmetrics
        # updates the accumulated state with autograd off, so neither the state nor the graph grows
        # (low confidence only).
        """
import lightning.pytorch as pl
import torch
import torch.nn as nn
from torchmetrics import MetricCollection
from torchmetrics.image import PeakSignalNoiseRatio, StructuralSimilarityIndexMeasure

class Restorer(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.automatic_optimization = False
        self.unet = nn.Conv2d(3, 3, 3, padding=1)
        self.quality = MetricCollection([PeakSignalNoiseRatio(data_range=1.0), StructuralSimilarityIndexMeasure(data_range=1.0)])

    def training_step(self, batch, batch_idx):
        noisy, clean = batch
        opt = self.optimizers()
        restored = self.unet(noisy)
        loss = nn.functional.l1_loss(restored, clean)
        opt.zero_grad()
        self.manual_backward(loss)
        opt.step()
        self.log_dict(self.quality(restored, clean))
""",
    )
    INVALID = (
        """
import lightning.pytorch as pl
import torch.nn as nn
from torchmetrics import AveragePrecision

class Tagger(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(300, 16)
        self.train_ap = AveragePrecision(task="multilabel", num_labels=16)

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self.net(x)
        self.train_ap.update(logits.sigmoid().detach(), y)  # expect: LL304
        if batch_idx % 100 == 0:
            self.log("train/ap", self.train_ap.compute())
        return nn.functional.binary_cross_entropy_with_logits(logits, y.float())
""",
        # Updated per validation batch, computed at the epoch's end, never reset: reported at compute().
        """
import lightning.pytorch as pl
import torch.nn as nn
from torchmetrics.classification import BinaryPrecisionRecallCurve

class Detector(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(64, 1)
        self.curve = BinaryPrecisionRecallCurve()

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.curve.update(self.net(x).squeeze(-1).sigmoid(), y)

    def on_validation_epoch_end(self):
        precision, recall, thresholds = self.curve.compute()  # expect: LL304
        self.log("val/best_precision", precision.max())
""",
        # A new list-state metric on every evaluation, never reset.
        """
import torch
from torchmetrics.classification import BinaryAUROC

def evaluate(model, loader, device):
    auroc = BinaryAUROC().to(device)  # expect: LL304
    with torch.no_grad():
        for x, y in loader:
            auroc.update(model(x.to(device)).squeeze(-1).sigmoid(), y.to(device))
    return auroc.compute().item()

def train(model, loader, valid, optimizer, device, epochs=10):
    for epoch in range(epochs):
        for x, y in loader:
            optimizer.zero_grad()
            model(x).sum().backward()
            optimizer.step()
        print(evaluate(model, valid, device))
""",
        # Fixed-size states: computed at each epoch's end and never reset (medium); a new metric per
        # evaluation, never reset (medium).
        """
import lightning.pytorch as pl
import torch
import torch.nn as nn
import torchmetrics
from torchmetrics.classification import MulticlassJaccardIndex

class Segmenter(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Conv2d(4, 6, 1)
        self.iou = MulticlassJaccardIndex(num_classes=6, average=None)

    def validation_step(self, batch, batch_idx):
        images, masks = batch
        self.iou.update(self.net(images).argmax(1), masks)

    def on_validation_epoch_end(self):
        per_class = self.iou.compute()  # expect: LL304
        self.log("val/miou", per_class.mean())

def validate(model, loader):
    mape = torchmetrics.MeanAbsolutePercentageError()  # expect: LL304
    with torch.no_grad():
        for x, y in loader:
            mape.update(model(x), y)
    return mape.compute().item()

def fit(model, loader, optimizer, epochs=10):
    for epoch in range(epochs):
        for x, y in loader:
            optimizer.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
        print(validate(model, loader))
""",
        # The file's own metric keeps list states; the collection is computed but never reset.
        """
import lightning.pytorch as pl
import torch
import torch.nn as nn
from torchmetrics import Metric

class KeypointSimilarity(Metric):
    def __init__(self):
        super().__init__()
        self.add_state("preds", default=[], dist_reduce_fx="cat")

    def update(self, preds):
        self.preds.append(preds.detach())

    def compute(self):
        return torch.cat(self.preds).mean()

class Pose(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(128, 34)
        self.metrics = nn.ModuleDict({"val_oks": KeypointSimilarity()})

    def validation_step(self, batch, batch_idx):
        self.metrics["val_oks"].update(self.head(batch))

    def on_validation_epoch_end(self):
        for name, metric in self.metrics.items():
            self.log(name, metric.compute())  # expect: LL304
""",
        # Image metrics asked for per-image values or full SSIM maps keep one tensor per update:
        # called every step of a trainer outside Lightning and never reset.
        """
import torch
from torchmetrics.image import PeakSignalNoiseRatio, StructuralSimilarityIndexMeasure

class Upscaler:
    def __init__(self, net, device):
        self.net = net.to(device)
        self.opt = torch.optim.AdamW(self.net.parameters(), lr=1e-4)
        self.ssim_maps = StructuralSimilarityIndexMeasure(data_range=1.0, return_full_image=True).to(device)
        self.psnr_per_image = PeakSignalNoiseRatio(data_range=1.0, dim=(1, 2, 3), reduction="none").to(device)

    def train_step(self, low, high):
        pred = self.net(low)
        loss = torch.nn.functional.l1_loss(pred, high)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        with torch.no_grad():
            _, ssim_map = self.ssim_maps(pred, high)  # expect: LL304
            psnr = self.psnr_per_image(pred, high)  # expect: LL304
        return loss.item(), ssim_map.mean().item(), psnr.mean().item()

def fit(trainer, loader, epochs):
    for epoch in range(epochs):
        for low, high in loader:
            print(trainer.train_step(low, high))
""",
    )

    def check(self, facts: ModuleFacts) -> Iterator[Violation]:
        return find_violations(facts)

    class Repro(Rule.Repro):
        """A metric with a list state, as torchmetrics' curve metrics keep one (every update appends
        its predictions and targets), updated every batch and computed once per epoch: never reset
        (leaky), or reset after each compute (fixed). torchmetrics is not needed: the class below
        behaves as ``AveragePrecision`` does for memory. One iteration is one epoch of 4 batches."""

        def setup(self, ctx):
            import torch

            class ListStateMetric:
                def __init__(self):
                    self.preds, self.target = [], []

                def update(self, preds, target):
                    self.preds.append(preds.detach())
                    self.target.append(target)

                def compute(self):
                    preds, target = torch.cat(self.preds), torch.cat(self.target)
                    return (preds * target).sum() / target.sum().clamp(min=1)

                def reset(self):
                    self.preds, self.target = [], []

            torch.manual_seed(0)
            ctx.metric = ListStateMetric()
            ctx.batches = [
                (torch.rand(2048, 16, device=ctx.device), torch.randint(0, 2, (2048, 16), device=ctx.device))
                for _ in range(4)
            ]

        def _epoch(self, ctx):
            for probs, target in ctx.batches:
                ctx.metric.update(probs.clone(), target.clone())
            return float(ctx.metric.compute())

        def leaky(self, ctx):
            self._epoch(ctx)

        def fixed(self, ctx):
            self._epoch(ctx)
            ctx.metric.reset()


# --- detection ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class MetricKind:
    """What a construction builds: a metric (or a collection of them) and whether its state is a
    list that gets one tensor per update."""

    label: str
    list_state: bool


@dataclass(eq=False)
class Home:
    """A name that holds a metric: ``self.train_ap``, ``self.metrics`` (a ModuleDict of metrics),
    or a local ``mape``; with its construction and everything done to it."""

    name: str
    owner: ClassInfo | None  # the class, for ``self.*``
    function: FunctionInfo  # where it is built
    fact: StatementFact  # the construction
    kind: MetricKind
    updates: list[StatementFact] = field(default_factory=list)
    computes: list[StatementFact] = field(default_factory=list)
    #: A reset, a Lightning log of the object (which resets it), or the object handed to code we
    #: cannot see (returned, passed to a call, stored elsewhere).
    managed: bool = False


def find_violations(facts: ModuleFacts) -> Iterator[Violation]:
    """The violations in one file."""
    homes = _homes(facts)
    if not homes:
        return
    _collect_uses(homes, facts)
    repeated = repeated_functions(facts)
    for home in homes:
        if home.managed or not home.updates:
            continue
        state = (
            "its list states keep every batch's predictions and targets"
            if home.kind.list_state
            else "its state keeps totals since it was built"
        )
        held = "with the list states that hold its inputs" if home.kind.list_state else "with its state tensors"
        per_call = _per_call(home.fact, home.function, repeated)
        if per_call is not None:
            # Built again and again and never reset: every instance is a reference cycle that keeps
            # its states until the cyclic collector runs, whatever their size.
            confidence = Confidence.HIGH if home.kind.list_state else Confidence.MEDIUM
            yield Violation(
                node=home.fact.node,
                message=(
                    f"a new {home.kind.label} is built {per_call} and never reset: a torchmetrics metric keeps "
                    "its wrapped update() and compute() on itself (a reference cycle), so every instance stays "
                    f"alive, {held}, until Python's cyclic collector runs"
                ),
                confidence=confidence,
                statement=home.fact.node,
            )
            continue
        repeating = [fact for fact in home.updates if _per_call(fact, fact.function, repeated) is not None]
        if not repeating:
            continue
        target = _report_at(home, repeating)
        where = _per_call(repeating[0], repeating[0].function, repeated)
        if home.kind.list_state:
            confidence = Confidence.HIGH
        elif target in home.computes:
            # Computed by a function that does not update it (an epoch-end hook): the value is meant
            # per period, and without a reset the metric keeps its state and totals since it was built.
            confidence = Confidence.MEDIUM
        else:
            confidence = Confidence.LOW  # a per-batch value (self.acc(preds, y)): nothing grows
        yield Violation(
            node=target.node,
            message=(
                f"{home.kind.label} '{home.name}' is updated {where} and never reset: {state}"
                + (", so its memory grows with every update" if home.kind.list_state else "")
                + ", and compute() covers everything since it was built"
                + (
                    " (its states are fixed-size, so nothing grows"
                    + ("" if home.computes else "; for the per-batch value alone, the functional form keeps no state")
                    + ")"
                    if confidence is Confidence.LOW
                    else ""
                )
            ),
            confidence=confidence,
            statement=target.node,
        )


def _per_call(fact: StatementFact, function: FunctionInfo, repeated: dict[FunctionInfo, str]) -> str | None:
    """How often ``fact`` runs, when it runs again and again: in a loop over iterations, or in a
    function that runs many times; None when it runs once."""
    for loop in reversed(fact.loops):
        if loop.is_iteration_loop or loop.repeats_per_input:
            return "in every iteration of a loop"
    if function.name == "__init__" or function.is_module_level:
        return None
    reason = repeated.get(function)
    if reason is None:
        return None
    return f"on every call of '{function.name}' ({reason})"


def _report_at(home: Home, updates: list[StatementFact]) -> StatementFact:
    """Where the reset is missing: the ``compute()`` of an epoch-end hook that runs apart from the
    updates; when the metric is computed where it is updated (or never), at the update that grows it."""
    updating = {fact.function for fact in updates}
    for fact in home.computes:
        if fact.function not in updating:
            return fact
    return updates[0]


# --- what a construction builds ---------------------------------------------------------------------
def metric_kind(expr: cst.BaseExpression, facts: ModuleFacts) -> MetricKind | None:
    """The metric (or collection of metrics) that ``expr`` builds: a torchmetrics class, a class
    of the file that derives from one, or a ``MetricCollection`` / ``nn.ModuleDict`` / dict or
    list literal of metrics."""
    expr = strip_returns_self(expr)
    if isinstance(expr, (cst.Dict, cst.List, cst.Tuple)):
        return _collection([_element_value(e) for e in expr.elements], facts)
    if not isinstance(expr, cst.Call):
        return None
    qualified = facts.imports.resolve(expr.func)
    if qualified is not None:
        if qualified in percall_api.WINDOWED_METRICS:
            return None  # a sliding window: bounded state, compute() covers the last updates only
        if percall_api.is_metric_class(qualified) and qualified not in percall_api.METRIC_COLLECTIONS:
            name = qualified.rsplit(".", 1)[-1]
            return MetricKind(f"'{name}' metric", _list_state(qualified, expr))
        if qualified in percall_api.METRIC_COLLECTIONS or qualified in ("torch.nn.ModuleDict", "torch.nn.ModuleList"):
            members = [arg.value for arg in expr.args[:1] if arg.keyword is None]
            return _collection(members, facts)
        return None
    if isinstance(expr.func, cst.Name):
        if expr.func.value in ("dict", "list") and expr.args:
            return _collection([arg.value for arg in expr.args], facts)
        cls = facts.structure.classes_by_name.get(expr.func.value)
        if cls is not None:
            list_state = _metric_class_state(cls, facts, 0)
            if list_state is not None:
                return MetricKind(f"'{cls.name}' metric", list_state)
    return None


def _element_value(element: cst.BaseElement | cst.BaseDictElement) -> cst.BaseExpression:
    return element.value  # type: ignore[union-attr]


def _collection(members: list[cst.BaseExpression], facts: ModuleFacts) -> MetricKind | None:
    kinds: list[MetricKind] = []
    for member in members:
        if isinstance(member, (cst.Dict, cst.List, cst.Tuple)):
            found = _collection([_element_value(e) for e in member.elements if not isinstance(e, cst.StarredDictElement)], facts)
        else:
            found = metric_kind(member, facts)
        if found is not None:
            kinds.append(found)
    if not kinds:
        return None
    return MetricKind("collection of metrics", any(kind.list_state for kind in kinds))


def _list_state(qualified: str, call: cst.Call) -> bool:
    switches = percall_api.LIST_STATE_ARGUMENTS.get(qualified.rsplit(".", 1)[-1], ())
    for arg in call.args:
        if arg.keyword is None:
            continue
        if arg.keyword.value == "multidim_average" and isinstance(arg.value, cst.SimpleString):
            if arg.value.evaluated_value == "samplewise":
                return True
        if arg.keyword.value == "thresholds" and not (isinstance(arg.value, cst.Name) and arg.value.value == "None"):
            return False  # binned curves: fixed-size states
        for keyword, values in switches:
            if arg.keyword.value == keyword and _switches_on(arg.value, values):
                return True  # per-image values or full images: one tensor per update
    return percall_api.has_list_state(qualified)


_NO_LITERAL = object()


def _literal(expr: cst.BaseExpression) -> object:
    """The value of a literal argument (a string, None, True/False, a number, a tuple or list of
    numbers); ``_NO_LITERAL`` for anything else (a name, a call: unknown here)."""
    if isinstance(expr, cst.SimpleString):
        return expr.evaluated_value
    if isinstance(expr, cst.Name) and expr.value in ("None", "True", "False"):
        return {"None": None, "True": True, "False": False}[expr.value]
    if isinstance(expr, cst.Integer):
        return int(expr.value, 0)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus) and isinstance(expr.expression, cst.Integer):
        return -int(expr.expression.value, 0)
    if isinstance(expr, (cst.Tuple, cst.List)):
        items = [_literal(element.value) for element in expr.elements]
        return _NO_LITERAL if any(item is _NO_LITERAL for item in items) else tuple(items)
    return _NO_LITERAL


def _switches_on(expr: cst.BaseExpression, values: object) -> bool:
    """``expr`` is one of ``values`` (see :data:`percall_api.LIST_STATE_ARGUMENTS`); an argument
    that is not a literal is not known to switch anything."""
    value = _literal(expr)
    if value is _NO_LITERAL:
        return False
    if values == percall_api.ANY_VALUE:
        return value is not None
    return any(value is wanted if isinstance(wanted, bool) or wanted is None else value == wanted for wanted in values)  # type: ignore[union-attr]


def _metric_class_state(cls: ClassInfo, facts: ModuleFacts, depth: int) -> bool | None:
    """None when ``cls`` is not a metric; else whether it keeps list states (its own
    ``add_state(name, default=[])``, or a list-state base)."""
    if depth > 4:
        return None
    is_metric = False
    list_state = False
    for base in cls.base_names:
        qualified = facts.imports.qualify(base)
        if qualified is not None and qualified not in percall_api.WINDOWED_METRICS and (qualified in percall_api.METRIC_BASES or percall_api.is_metric_class(qualified)):
            is_metric = True
            list_state |= percall_api.has_list_state(qualified)
    for local in cls.local_bases:
        found = _metric_class_state(local, facts, depth + 1)
        if found is not None:
            is_metric = True
            list_state |= found
    if not is_metric:
        return None
    return list_state or _adds_list_state(cls)


def _adds_list_state(cls: ClassInfo) -> bool:
    for node in walk(cls.node.body):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "add_state":
            for position, arg in enumerate(node.args):
                if (arg.keyword is not None and arg.keyword.value == "default") or (arg.keyword is None and position == 1):
                    value = arg.value
                    if isinstance(value, cst.List) or (isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "list"):
                        return True
    return False


# --- where metrics live, and what is done to them -----------------------------------------------------
def _homes(facts: ModuleFacts) -> list[Home]:
    homes = []
    metric_classes = {cls for cls in facts.structure.classes.values() if _metric_class_state(cls, facts, 0) is not None}
    for fact in facts.statements():
        node = fact.node
        if fact.function.cls in metric_classes:
            continue  # a metric's own code
        if isinstance(node, cst.Assign) and len(node.targets) == 1:
            target, value = node.targets[0].target, node.value
        elif isinstance(node, cst.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        else:
            continue
        name = dotted_name(target)
        if name is None or name.count(".") > 1 or ("." in name and not name.startswith("self.")):
            continue
        kind = metric_kind(value, facts)
        if kind is None:
            continue
        owner = fact.function.cls if name.startswith("self.") else None
        homes.append(Home(name, owner, fact.function, fact, kind))
    return homes


def _in_scope(home: Home, function: FunctionInfo) -> bool:
    if home.owner is not None:
        return function.cls is home.owner
    if home.function.is_module_level:
        return True
    return function is home.function


def _refers(expr: cst.BaseExpression, home: Home, aliases: set[str]) -> bool:
    """``expr`` is the metric: its name, an item of its collection, or a name bound to one of those."""
    while isinstance(expr, cst.Subscript):
        expr = expr.value
    name = dotted_name(expr)
    return name is not None and (name == home.name or name in aliases)


def _aliases(home: Home, function: FunctionInfo, facts: ModuleFacts) -> set[str]:
    """Names bound to the metric or its members in ``function``: ``metric = self.metrics["val"]``,
    ``for name, metric in self.metrics.items():``."""
    node = function.node
    if node is None:
        return set()
    found: set[str] = set()
    for current in walk(node.body, into=not_into_scopes):
        if isinstance(current, cst.For) and _iterates(current.iter, home, found):
            found.update(_member_names(current.iter, current.target))
        elif isinstance(current, cst.Assign) and len(current.targets) == 1 and _refers(current.value, home, found):
            found.update(bound_names(current.targets[0].target))
    found.discard(home.name)
    return found


def _member_names(iterable: cst.BaseExpression, target: cst.BaseExpression) -> list[str]:
    """The loop names bound to members: the value of ``for name, metric in d.items()`` and of
    ``for i, metric in enumerate(metrics)``, none for ``.keys()``."""
    if isinstance(iterable, cst.Call):
        func = iterable.func
        pairs = (isinstance(func, cst.Attribute) and func.attr.value == "items") or (
            isinstance(func, cst.Name) and func.value == "enumerate"
        )
        if isinstance(func, cst.Attribute) and func.attr.value == "keys":
            return []
        if pairs:
            if isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == 2:
                return bound_names(target.elements[1].value)
            return []
    return bound_names(target)


def _iterates(iterable: cst.BaseExpression, home: Home, aliases: set[str]) -> bool:
    if isinstance(iterable, cst.Call):
        func = iterable.func
        if isinstance(func, cst.Attribute) and func.attr.value in ("items", "values", "keys"):
            return _refers(func.value, home, aliases)
        if isinstance(func, cst.Name) and func.value in ("enumerate", "zip", "list", "sorted", "reversed"):
            return any(_iterates(arg.value, home, aliases) for arg in iterable.args)
        return False
    return _refers(iterable, home, aliases)


def _collect_uses(homes: list[Home], facts: ModuleFacts) -> None:
    alias_cache: dict[tuple[int, FunctionInfo], set[str]] = {}
    for fact in facts.statements():
        function = fact.function
        for index, home in enumerate(homes):
            if home.managed or not _in_scope(home, function):
                continue
            key = (index, function)
            if key not in alias_cache:
                alias_cache[key] = _aliases(home, function, facts)
            aliases = alias_cache[key]
            if fact is home.fact:
                continue
            _classify(fact, home, aliases)


def _classify(fact: StatementFact, home: Home, aliases: set[str]) -> None:
    node = fact.node
    if isinstance(node, cst.Return) and node.value is not None and _mentions(node.value, home, aliases):
        home.managed = True  # handed to the caller
        return
    if isinstance(node, (cst.Assign, cst.AnnAssign)) and node.value is not None:
        value = strip_returns_self(node.value)
        if _refers(value, home, aliases) and not _aliasing(node, home):
            home.managed = True  # kept under another name we do not follow
            return
    for call in walk(node, into=not_into_scopes):
        if not isinstance(call, cst.Call):
            continue
        func = call.func
        if isinstance(func, cst.Attribute) and _refers(func.value, home, aliases) and not isinstance(func.value, cst.Call):
            method = func.attr.value
            if method in percall_api.METRIC_RESET_METHODS:
                home.managed = True
                return
            if method in percall_api.METRIC_UPDATE_METHODS:
                home.updates.append(fact)
            elif method in percall_api.METRIC_COMPUTE_METHODS:
                home.computes.append(fact)
            continue
        if _refers(func, home, aliases) and not isinstance(func, cst.Call):
            home.updates.append(fact)  # metric(preds, target): forward updates the state too
            continue
        for arg in call.args:
            if _mentions(arg.value, home, aliases):
                # self.log("acc", self.acc) makes Lightning compute and reset it every epoch; any
                # other call may reset it where we cannot see.
                home.managed = True
                return


def _aliasing(node: cst.Assign | cst.AnnAssign, home: Home) -> bool:
    """``metric = self.metrics["val"]`` inside a function: a local alias, followed by :func:`_aliases`."""
    targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
    return all(isinstance(target, cst.Name) for target in targets) and home.owner is not None


def _mentions(expr: cst.BaseExpression, home: Home, aliases: set[str]) -> bool:
    """The metric object itself appears in ``expr`` (not a value computed from it)."""
    if _refers(expr, home, aliases):
        return True
    if isinstance(expr, (cst.Dict, cst.List, cst.Tuple, cst.Set)):
        return any(_mentions(_element_value(e), home, aliases) for e in expr.elements if not isinstance(e, cst.StarredDictElement))
    return False
