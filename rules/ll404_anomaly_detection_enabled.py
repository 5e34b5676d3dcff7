"""LL404 anomaly-detection-enabled: autograd anomaly detection left on in training code."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from leaklint.findings import Confidence, Severity
from leaklint.rule import Rule, Violation

if TYPE_CHECKING:
    from leaklint.analysis.facts import ModuleFacts
    from leaklint.prefilter import SyntaxShape


class AnomalyDetectionEnabled(Rule):
    code = "LL404"
    name = "anomaly-detection-enabled"
    severity = Severity.PERF
    fixable = True
    summary = "Autograd anomaly detection is switched on outside a debugging guard, slowing every step and holding extra memory."
    help = "remove it, or enable it only behind a debug flag (if args.debug: torch.autograd.set_detect_anomaly(True))"
    docs = """
## What it finds
`torch.autograd.set_detect_anomaly(True)` (a runtime argument is medium confidence),
`with torch.autograd.detect_anomaly():`, the `@torch.autograd.detect_anomaly()` decorator, and
Lightning's `Trainer(detect_anomaly=True)`, in code that is not a test or a debugging aid.

It stays quiet in test modules (files that import `pytest` or `unittest`), in functions named
`test_*` or containing `debug`, under a guard that mentions debugging (`if args.debug:`,
`if cfg.detect_anomaly:`, `if DEBUG:`, a ternary on such a flag), when the flag passed is itself
a debug option (`set_detect_anomaly(args.detect_anomaly)`), and when the same function switches
it off again (`set_detect_anomaly(False)`) after a bounded region.

## Why it matters
Anomaly mode records the Python traceback of every operation in the forward pass, stores it on
the autograd graph, and checks the output of every backward function for NaNs. Training runs
several times slower (reports measure 2x to 2.5x per epoch), and the stored tracebacks add host
memory per operation; combined with `autograd.grad` it has leaked memory every iteration. It is a
debugging switch that is easy to leave on: PyTorch's own docs say "This mode should be enabled
only for debugging", and the performance tuning guide lists it under "Disable debugging APIs".

## Example
```python
torch.autograd.set_detect_anomaly(True)

for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
```

## Use instead
```python
if args.debug:
    torch.autograd.set_detect_anomaly(True)

for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
```

## Fix safety
**Display only** (shown, never applied): remove the `torch.autograd.set_detect_anomaly(True)`
statement (leaving `pass` where it is the only statement of its block), unwrap
`with torch.autograd.detect_anomaly():` (its body stays, dedented), or drop Lightning's
`detect_anomaly=True`. Whether anomaly mode is a leftover or a debugging aid someone still needs is
the author's call, and the usual repair, a debug flag around it, needs a flag leaklint cannot
invent. The `@torch.autograd.detect_anomaly()` decorator gets no suggested edit.

## Known false positives
leaklint does not see the file name, so a test file that imports neither `pytest` nor
`unittest` is linted like training code: exclude test directories with `per-file-ignores` or
suppress the line with `# noqa: LL404`. A debugging script kept next to the training code is
reported unless its function names or guards say "debug".

## References
- `torch.autograd.detect_anomaly` ("should be enabled only for debugging as the different tests
  will slow down your program execution"): https://pytorch.org/docs/stable/autograd.html#anomaly-detection
- PyTorch performance tuning guide, "Disable debugging APIs":
  https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html
- Memory growth with anomaly mode: https://github.com/pytorch/pytorch/issues/26408,
  https://github.com/pytorch/pytorch/issues/51349
- Left on in research code, slowing training: https://github.com/yenchenlin/nerf-pytorch/issues/42,
  https://github.com/JasonMa2016/GoFAR/pull/2
- Lightning's warning on `detect_anomaly=True`: https://github.com/Lightning-AI/pytorch-lightning/issues/17359
- Runtime repro: `leaklint verify LL404` measures the leaky and the fixed loop body.
"""
    VALID = (
        """
import torch
if args.debug:
    torch.autograd.set_detect_anomaly(True)
torch.autograd.set_detect_anomaly(args.detect_anomaly)
torch.autograd.set_detect_anomaly(False)
""",
        """
import torch
from contextlib import nullcontext
for x, y in loader:
    with torch.autograd.detect_anomaly() if cfg.debug else nullcontext():
        loss = model(x).sum()
        loss.backward()
""",
        """
import torch
def debug_nan(model, batch):
    with torch.autograd.detect_anomaly():
        model(batch).sum().backward()

def test_backward_is_finite(model, batch):
    torch.autograd.set_detect_anomaly(True)
    model(batch).sum().backward()
""",
        """
import pytest
import torch
torch.autograd.set_detect_anomaly(True)
""",
        # a bounded region, switched off again
        """
import torch
def check_step(model, batch):
    torch.autograd.set_detect_anomaly(True)
    model(batch).sum().backward()
    torch.autograd.set_detect_anomaly(False)
""",
    )
    INVALID = (
        """
import torch
torch.autograd.set_detect_anomaly(True)  # expect: LL404
for x, y in loader:
    loss = model(x).sum()
    loss.backward()
""",
        """
from torch import autograd
def train(model, loader, optimizer):
    for x, y in loader:
        with autograd.detect_anomaly():  # expect: LL404
            loss = model(x).sum()
            loss.backward()
        optimizer.step()
""",
        """
import torch
@torch.autograd.detect_anomaly()  # expect: LL404
def train_step(model, batch):
    model(batch).sum().backward()
""",
        """
import pytorch_lightning as pl
trainer = pl.Trainer(max_epochs=10, detect_anomaly=True)  # expect: LL404
""",
    )

    @classmethod
    def may_report(cls, shape: SyntaxShape, min_confidence: Confidence) -> bool:
        """The calls reported switch anomaly detection on (``detect_anomaly``)."""
        return shape.mentions("detect_anomaly")

    def check(self, facts: ModuleFacts) -> Iterator[Violation]:
        from leaklint.rules.checks.ll404_anomaly_detection_enabled import check

        return check(facts)

    class Repro(Rule.Repro):
        """Training steps with autograd anomaly detection switched on, vs off."""

        def setup(self, ctx):
            import torch
            ctx.model = torch.nn.Sequential(*[m for _ in range(6) for m in (torch.nn.Linear(32, 32), torch.nn.Tanh())]).to(ctx.device)
            ctx.optimizer = torch.optim.SGD(ctx.model.parameters(), lr=0.01)
            ctx.x = torch.randn(8, 32, device=ctx.device)

        def _step(self, ctx):
            ctx.optimizer.zero_grad()
            ctx.model(ctx.x).pow(2).mean().backward()
            ctx.optimizer.step()

        def leaky(self, ctx):
            import torch
            with torch.autograd.set_detect_anomaly(True):
                self._step(ctx)

        def fixed(self, ctx):
            self._step(ctx)
