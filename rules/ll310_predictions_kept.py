"""LL310 predictions-kept: Lightning's ``trainer.predict()`` keeps what ``predict_step`` returns
for every batch, to return the list, and the caller drops that list."""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.names import dotted_name
from leaklint.analysis.places import Place
from leaklint.analysis.structure import ClassInfo, FunctionInfo
from leaklint.analysis.syntax import call_argument
from leaklint.analysis.torch_api import LIGHTNING_TRAINERS
from leaklint.analysis.timeline import del_targets
from leaklint.analysis.walk import not_into_scopes, walk
from leaklint.findings import Applicability, Confidence, Severity
from leaklint.fixes.spec import SuggestedFix, add_keyword
from leaklint.gate import Names, Words
from leaklint.rule import Measured, Rule, Violation


class PredictionsKept(Rule):
    code = "LL310"
    name = "predictions-kept"
    severity = Severity.PEAK
    summary = (
        "Lightning's trainer.predict() keeps what predict_step returns for every batch, to return the list, "
        "and the caller drops it: host memory grows with the whole prediction run for nothing."
    )
    help = (
        "pass return_predictions=False (write each batch's predictions from predict_step or a "
        "BasePredictionWriter callback instead)"
    )
    #: Every finding is a ``predict`` call of a Lightning trainer: the file names Lightning.
    needs = Words("lightning") & Names("predict")
    fixable = True
    #: bench/realcode, both corpora (true, false, debatable), and bench/leaks (true, false), written by bench/measured.py --write.
    measured = Measured(realcode=(0, 0, 0), leaks=(1, 0))
    docs = """
## What it finds
A call of `predict(...)` on a Lightning `Trainer` (`pl.Trainer(...)`, a name or attribute the file
binds to one, `self.trainer` in a LightningModule) whose result nobody uses: a statement of its
own, or a name that nothing reads, while `return_predictions` is not passed (or is `True`).

Confidence is high when the module passed is of a LightningModule class of the file whose
`predict_step` returns something (or that keeps Lightning's default `predict_step`, which returns
`self(batch)`); medium when the module comes from elsewhere, or its `predict_step` also returns
nothing on some path. It stays quiet when the class's `predict_step` returns nothing, when
`return_predictions=False` (or any value other than `True` and `None` that leaklint cannot read)
is passed, when the trainer's strategy starts processes (`ddp_spawn`, `ddp_fork`,
`ddp_notebook`: Lightning then returns nothing by default), when the file sets up a prediction
writer that writes once per epoch (`write_interval="epoch"` or `"batch_and_epoch"`: Lightning keeps
every batch's prediction for it whatever `return_predictions` says), when the result is used, when `*args` or `**kwargs` hide the arguments, and for a
call at the top level of a notebook cell (the notebook shows the list and keeps it in its output
history: the user asked for it).

## Why it matters
With `return_predictions` left at its default, Lightning's prediction loop appends what
`predict_step` returns for every batch to a list (moved to the CPU first), and `predict()`
returns that list at the end; the loop itself keeps it (`trainer.predict_loop.predictions`) until
the next prediction run starts. A script that writes its predictions itself, from `predict_step` or
a `BasePredictionWriter` callback, and drops the return value still has every batch's outputs in
host memory, growing through the run and held after it: segmentation masks, embeddings or generated sequences for the whole
data set. On a large data set that is tens of gigabytes, and the run is killed for it.

## Example
```python
writer = MaskWriter("outputs/")  # a BasePredictionWriter: writes every batch to disk
trainer = pl.Trainer(accelerator="gpu", devices=1, callbacks=[writer])
trainer.predict(model, dataloaders=tiles)  # also keeps every batch's masks in memory
```

## Use instead
```python
trainer.predict(model, dataloaders=tiles, return_predictions=False)
```

## Fix safety
**Safe**, offered when the call is a statement of its own: it adds `return_predictions=False`.
The return value was dropped, so nothing reads the `None` that `predict()` now returns; the
writer callbacks and `predict_step` run exactly as before. Not offered for a result bound to a
name nothing reads (deleting the name is up to you).

## Known false positives
A prediction run over a handful of batches (a smoke test), where the list is small. The rule does
not see a result read through `locals()` or a debugger.

Measured on bench/realcode (90 repositories, 1.34 million lines) and on the library code of
accelerate, lightning, peft, timm, torch_geometric, torchmetrics and trl: no finding. The Lightning
examples there keep the predictions they ask for (`predictions = trainer.predict(...)`, then used).

## References
- eva (kaiko.ai), "Fix memory leakage in predict function": `trainer.predict(...)` accumulated
  every prediction tensor although the predictions were saved to disk; fixed with
  `return_predictions=False`: https://github.com/kaiko-ai/eva/issues/172
- ahcore, whole-slide tile segmentation writing predictions with a callback while `predict()` also
  kept them: https://github.com/NKI-AI/ahcore/pull/37
- rslearn, "Predictions are stored in-memory without `--return_predictions=false`":
  https://github.com/allenai/rslearn/issues/264
- cellarium-ml injects `return_predictions=False` into `trainer.predict()` next to its prediction
  writer: https://github.com/cellarium-ai/cellarium-ml/pull/286
- Lightning, "trainer.predict method should return iterator instead of list" (the list runs out of
  memory): https://github.com/Lightning-AI/pytorch-lightning/issues/6508
- Runtime repro: `leaklint verify LL310` measures the leaky and the fixed prediction run.
"""

    VALID = (
        # Predictions written by a callback, the list switched off; predictions used by the caller.
        """
import lightning.pytorch as pl
import torch

class Segmenter(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Conv2d(3, 4, 1)

    def predict_step(self, batch, batch_idx):
        return self.net(batch).softmax(1)

def run(loader, writer):
    trainer = pl.Trainer(callbacks=[writer])
    trainer.predict(Segmenter(), dataloaders=loader, return_predictions=False)
    predictions = trainer.predict(Segmenter(), dataloaders=loader)
    return torch.cat(predictions)
""",
        # A predict_step that writes its outputs itself and returns nothing; a Keras model's predict.
        """
import lightning.pytorch as pl
import torch

class Embedder(pl.LightningModule):
    def __init__(self, out_dir):
        super().__init__()
        self.net = torch.nn.Linear(16, 16)
        self.out_dir = out_dir

    def predict_step(self, batch, batch_idx):
        torch.save(self.net(batch).cpu(), f"{self.out_dir}/{batch_idx}.pt")

def run(loader, keras_model, x):
    pl.Trainer().predict(Embedder("out"), loader)
    keras_model.predict(x)
""",
        # A strategy that starts processes returns nothing by default; a writer that works on the
        # whole epoch needs Lightning to keep every batch's prediction anyway.
        """
import lightning.pytorch as pl
import torch
from lightning.pytorch.callbacks import BasePredictionWriter

class Segmenter(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Conv2d(3, 4, 1)

    def predict_step(self, batch, batch_idx):
        return self.net(batch).argmax(1)

class EpochWriter(BasePredictionWriter):
    def __init__(self, path):
        super().__init__(write_interval="epoch")
        self.path = path

    def write_on_epoch_end(self, trainer, pl_module, predictions, batch_indices):
        torch.save(predictions, self.path)

def run(loader):
    pl.Trainer(devices=1, callbacks=[EpochWriter("masks.pt")]).predict(Segmenter(), dataloaders=loader)
""",
        """
import lightning.pytorch as pl
import torch

class Segmenter(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Conv2d(3, 4, 1)

    def predict_step(self, batch, batch_idx):
        return self.net(batch).argmax(1)

def run(loader):
    pl.Trainer(devices=4, strategy="ddp_spawn").predict(Segmenter(), dataloaders=loader)
""",
    )
    INVALID = (
        # The tile segmenter: a writer callback saves every batch, predict() keeps them all too.
        """
import lightning.pytorch as pl
import torch
from lightning.pytorch.callbacks import BasePredictionWriter

class Segmenter(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Conv2d(3, 4, 1)

    def predict_step(self, batch, batch_idx):
        return {"probs": self.net(batch["image"]).softmax(1), "coords": batch["coords"]}

class MaskWriter(BasePredictionWriter):
    def write_on_batch_end(self, trainer, pl_module, prediction, batch_indices, batch, batch_idx, dataloader_idx=0):
        torch.save(prediction["probs"].argmax(1).cpu(), f"masks/{batch_idx}.pt")

def main(tiles):
    model = Segmenter()
    trainer = pl.Trainer(accelerator="auto", callbacks=[MaskWriter(write_interval="batch")])
    trainer.predict(model, dataloaders=tiles)  # expect: LL310
""",
        # Lightning's default predict_step (self(batch)); a module loaded from a checkpoint and one
        # from elsewhere (medium); a result bound to a name nothing reads.
        """
import pytorch_lightning as pl
import torch

class Encoder(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(64, 512)

    def forward(self, x):
        return self.net(x)

def embed_all(loader, ckpt, other_module):
    trainer = pl.Trainer(devices=1)
    trainer.predict(Encoder(), loader)  # expect: LL310
    outputs = trainer.predict(Encoder.load_from_checkpoint(ckpt), loader)  # expect: LL310
    trainer.predict(other_module, loader)  # expect: LL310
""",
        # Explicit None is the default; a predict_step that returns nothing on some path (medium);
        # a result deleted unread.
        """
import lightning.pytorch as pl
import torch

class Detector(pl.LightningModule):
    def __init__(self, keep_outputs=True):
        super().__init__()
        self.net = torch.nn.Linear(16, 4)
        self.keep_outputs = keep_outputs

    def predict_step(self, batch, batch_idx):
        boxes = self.net(batch)
        if not self.keep_outputs:
            return None
        return boxes

def run(loader):
    trainer = pl.Trainer(devices=1)
    trainer.predict(Detector(), loader, return_predictions=None)  # expect: LL310
    preds = trainer.predict(Detector(), loader)  # expect: LL310
    del preds
""",
    )

    def check(self, facts: ModuleFacts) -> Iterator[Violation]:
        return find_violations(facts)

    class Repro(Rule.Repro):
        """One Lightning prediction run per step over a small loader, the predictions dropped by the
        caller: with the default ``return_predictions`` the trainer keeps every batch's outputs
        until ``predict()`` returns (a higher peak); with ``return_predictions=False`` it keeps none."""

        requires = ("torch", "lightning")

        def setup(self, ctx):
            import lightning.pytorch as pl
            import torch
            from torch.utils.data import DataLoader, TensorDataset

            class Expander(pl.LightningModule):
                def __init__(self):
                    super().__init__()
                    self.net = torch.nn.Linear(16, 2048)

                def predict_step(self, batch, batch_idx):
                    return self.net(batch[0])

            ctx.module = Expander()
            ctx.loader = DataLoader(TensorDataset(torch.randn(512, 16)), batch_size=32)
            ctx.trainer = pl.Trainer(
                accelerator="gpu" if ctx.device == "cuda" else "cpu",
                devices=1,
                logger=False,
                enable_checkpointing=False,
                enable_progress_bar=False,
                enable_model_summary=False,
            )

        def leaky(self, ctx):
            ctx.trainer.predict(ctx.module, dataloaders=ctx.loader)  # noqa: LL310 (the leaky variant)

        def fixed(self, ctx):
            ctx.trainer.predict(ctx.module, dataloaders=ctx.loader, return_predictions=False)


# --- detection ------------------------------------------------------------------------------------
#: Words in a strategy's name or start method that mean Lightning starts new processes.
SPAWNING = ("spawn", "fork", "notebook")
#: Class methods that build a module of their class (``Model.load_from_checkpoint(path)``).
LOADING_CLASSMETHODS = frozenset({"load_from_checkpoint"})


def find_violations(facts: ModuleFacts) -> Iterator[Violation]:
    """One violation per ``trainer.predict(...)`` of a Lightning trainer whose result is dropped."""
    for place in facts.index.calls_named("predict"):
        call = place.node
        assert isinstance(call, cst.Call)
        if not isinstance(call.func, cst.Attribute) or any(arg.star for arg in call.args):
            continue
        if not _dropped(facts, place):
            continue
        function = place.function(facts) or facts.structure.top
        trainer = _lightning_trainer(facts, call.func.value, function)
        if trainer is None or (isinstance(trainer, cst.Call) and _spawns_processes(trainer)):
            continue  # not Lightning's; or a strategy that starts processes, where nothing is returned
        keep = call_argument(call, -1, "return_predictions")
        if keep is not None and not (isinstance(keep, cst.Name) and keep.value in ("True", "None")):
            continue
        if _epoch_writer(facts):
            continue  # a writer that works on the whole epoch needs the predictions kept anyway
        module = call_argument(call, 0, "model")
        cls = _module_class(facts, module, function) if module is not None else None
        returned = _returned(facts, cls) if cls is not None else None
        if cls is not None and returned is None:
            continue  # its predict_step returns nothing: a list of None per batch
        if cls is not None:
            what = f"what '{cls.name}.predict_step' returns ({returned})"
            confidence = Confidence.MEDIUM if _returns_none_somewhere(cls) else Confidence.HIGH
        else:
            what = "what the module's predict_step returns (its outputs, by default 'self(batch)')"
            confidence = Confidence.MEDIUM
        fix = None
        if isinstance(place.path[-1], cst.Expr) and keep is None and not _epoch_writer(facts):
            fix = SuggestedFix(
                "pass return_predictions=False",
                Applicability.SAFE,
                (add_keyword(facts.module, call, "return_predictions", "False"),),
            )
        yield Violation(
            node=call,
            message=(
                f"'{facts.describe(call)}' keeps {what} for every batch of the run, to return them as a list "
                "(Lightning moves each to the CPU), and this call drops that list: host memory grows with every "
                "batch, for nothing, and the trainer's prediction loop holds the list until its next run"
            ),
            confidence=confidence,
            statement=place.statement(),
            fix=fix,
        )


def _dropped(facts: ModuleFacts, place: Place) -> bool:
    """The call is a statement of its own, or its result goes to a name nothing reads."""
    parent = place.path[-1] if place.path else None
    if isinstance(parent, cst.Expr):
        # In a notebook, a cell's top-level expression is displayed and kept in the kernel's output history.
        return not (facts.notebook and place.function(facts) is None)
    if not isinstance(parent, cst.Assign) or len(parent.targets) != 1 or not isinstance(parent.targets[0].target, cst.Name):
        return False
    target = parent.targets[0].target
    if target.value == "_":
        return True
    function = place.function(facts)
    scope = function.node if function is not None and function.node is not None else facts.module
    deleted = {id(t) for node in walk(scope) if type(node) is cst.Del for t in del_targets(node)}  # type: ignore[arg-type]
    return not any(
        type(node) is cst.Name and node.value == target.value and node is not target and id(node) not in deleted for node in walk(scope)
    )


def _lightning_trainer(facts: ModuleFacts, expr: cst.BaseExpression, function: FunctionInfo) -> cst.Call | bool | None:
    """The ``pl.Trainer(...)`` call that builds the trainer ``expr`` is (itself, or what a name or
    attribute of the file is bound to), True for ``self.trainer`` in a LightningModule (built
    elsewhere), None for anything else."""
    if isinstance(expr, cst.Call):
        return expr if facts.imports.resolve(expr.func) in LIGHTNING_TRAINERS else None
    name = dotted_name(expr)
    if name is None:
        return None
    if name == "self.trainer" and function.cls is not None and function.cls.is_lightning:
        return True
    for value in facts.index.visible_values(function, name):
        if isinstance(value, cst.Call) and facts.imports.resolve(value.func) in LIGHTNING_TRAINERS:
            return value
    return None


def _spawns_processes(trainer: cst.Call) -> bool:
    """``strategy="ddp_spawn"`` (or ``ddp_fork``, ``ddp_notebook``, a strategy object started
    with ``start_method="spawn"``): Lightning then returns no predictions by default."""
    strategy = call_argument(trainer, -1, "strategy")
    if strategy is None:
        return False
    return any(isinstance(node, cst.SimpleString) and any(word in node.value for word in SPAWNING) for node in walk(strategy))


def _epoch_writer(facts: ModuleFacts) -> bool:
    """The file sets up a prediction writer that writes once per epoch (``write_interval="epoch"``
    or ``"batch_and_epoch"``, as a keyword or as the first argument of a writer class): Lightning
    keeps every batch's prediction for it whatever ``return_predictions`` says."""
    for node in walk(facts.module):
        if not isinstance(node, cst.Call):
            continue
        interval = call_argument(node, -1, "write_interval")
        if interval is None and node.args and node.args[0].keyword is None and _is_writer(facts, node):
            interval = node.args[0].value
        if isinstance(interval, cst.SimpleString) and "epoch" in interval.value:
            return True
    return False


def _is_writer(facts: ModuleFacts, call: cst.Call) -> bool:
    """``call`` builds a prediction writer (Lightning's ``BasePredictionWriter`` or a class of the
    file deriving from it), or is the ``super().__init__(...)`` of one."""
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value == "__init__":
        return True  # super().__init__("epoch") inside a writer class; checked by the string below
    cls = facts.structure.classes_by_name.get(func.value) if isinstance(func, cst.Name) else None
    bases = cls.qualified_bases if cls is not None else (facts.imports.resolve(func) or "",)
    return any(base.endswith("BasePredictionWriter") for base in bases)


def _returns_none_somewhere(cls: ClassInfo) -> bool:
    """``predict_step`` also returns nothing on some path (a bare ``return``, ``return None``)."""
    method = cls.find_method("predict_step")
    if method is None:
        return False
    return any(
        isinstance(node, cst.Return) and (node.value is None or (isinstance(node.value, cst.Name) and node.value.value == "None"))
        for node in walk(method.body, into=not_into_scopes)
    )


def _module_class(facts: ModuleFacts, expr: cst.BaseExpression, function: FunctionInfo, depth: int = 0) -> ClassInfo | None:
    """The LightningModule class of the file that ``expr`` builds: ``Model(...)``,
    ``Model.load_from_checkpoint(...)``, or a name bound to one of those."""
    if depth > 3:
        return None
    if isinstance(expr, cst.Call):
        func = expr.func
        if isinstance(func, cst.Attribute) and func.attr.value in LOADING_CLASSMETHODS:
            func = func.value
        cls = facts.structure.classes_by_name.get(func.value) if isinstance(func, cst.Name) else None
        return cls if cls is not None and cls.is_lightning else None
    if isinstance(expr, cst.Name) and expr.value not in function.params:
        for value in facts.index.visible_values(function, expr.value):
            cls = _module_class(facts, value, function, depth + 1)
            if cls is not None:
                return cls
    return None


def _returned(facts: ModuleFacts, cls: ClassInfo) -> str | None:
    """What ``cls.predict_step`` returns, quoted (``self(batch)`` for Lightning's default, which
    runs ``forward``), or None when it returns nothing."""
    method = cls.find_method("predict_step")
    if method is None:
        return "by default 'self(batch)'" if cls.find_method("forward") is not None else None
    for node in walk(method.body, into=not_into_scopes):
        if isinstance(node, cst.Return) and node.value is not None and not (isinstance(node.value, cst.Name) and node.value.value == "None"):
            return f"'{facts.describe(node.value)}'"
    return None
