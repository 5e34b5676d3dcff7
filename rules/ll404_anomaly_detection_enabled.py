"""LL404 anomaly-detection-enabled: autograd anomaly detection left on in training code."""

from __future__ import annotations

import re
from typing import Iterator

import libcst as cst

from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.names import dotted_names_in
from leaklint.analysis.places import Place
from leaklint.analysis.syntax import call_argument, is_literal
from leaklint.analysis.torch_api import LIGHTNING_TRAINERS, TORCH_CODE
from leaklint.analysis.walk import walk
from leaklint.findings import Applicability, Confidence, Severity
from leaklint.fixes.spec import EditSpec, RemoveStatement, SuggestedFix, UnwrapWith, drop_argument
from leaklint.gate import Words
from leaklint.rule import Measured, Rule, Violation


class AnomalyDetectionEnabled(Rule):
    code = "LL404"
    name = "anomaly-detection-enabled"
    severity = Severity.PERF
    fixable = True
    summary = "Autograd anomaly detection is switched on outside a debugging guard, slowing every step and holding extra memory."
    help = "remove it, or enable it only behind a debug flag (if args.debug: torch.autograd.set_detect_anomaly(True))"
    needs = TORCH_CODE & Words("detect_anomaly")
    #: bench/realcode, both corpora (true, false, debatable), and bench/leaks (true, false), written by bench/measured.py --write.
    measured = Measured(realcode=(1, 0, 0), leaks=(0, 0))
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

    def check(self, facts: ModuleFacts) -> Iterator[Violation]:
        return find_violations(facts)

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


# --- detection ------------------------------------------------------------------------------------
SET_DETECT_ANOMALY = frozenset({"torch.autograd.set_detect_anomaly", "torch.autograd.anomaly_mode.set_detect_anomaly"})
DETECT_ANOMALY = frozenset({"torch.autograd.detect_anomaly", "torch.autograd.anomaly_mode.detect_anomaly"})
#: A name or string in a guard or flag that says "only while debugging".
_DEBUG_WORD = re.compile(r"debug|anomal", re.IGNORECASE)
_TEST_FUNCTION = re.compile(r"^_*test", re.IGNORECASE)


def _mentions_debug(node: cst.CSTNode) -> bool:
    """A debug flag: ``args.debug``, ``cfg.detect_anomaly``, ``os.environ.get("DEBUG")``..."""
    if any(_DEBUG_WORD.search(name) for name in dotted_names_in(node)):
        return True
    return any(isinstance(n, cst.SimpleString) and _DEBUG_WORD.search(n.value) for n in walk(node))


def find_violations(facts: ModuleFacts) -> Iterator[Violation]:
    """The violations in one file."""
    if facts.imports.imports_anything_from("pytest", "unittest"):
        return  # a test module: checking gradients is its job

    targets = SET_DETECT_ANOMALY | DETECT_ANOMALY | LIGHTNING_TRAINERS
    places = [
        place
        for place in facts.index.calls_named("set_detect_anomaly", "detect_anomaly", "Trainer")
        if facts.imports.resolve(place.node.func) in targets  # type: ignore[attr-defined]
    ]
    switched_off: dict[cst.CSTNode | None, list[Place]] = {}
    for place in places:
        if facts.imports.resolve(place.node.func) in SET_DETECT_ANOMALY and _enabled_by(place.node) is False:  # type: ignore[attr-defined,arg-type]
            switched_off.setdefault(place.scope, []).append(place)
    for place in places:
        call = place.node
        assert isinstance(call, cst.Call)
        confidence = _confidence(facts, call)
        if confidence is None or _is_debug_context(place):
            continue
        if any(_starts_before(place, off) for off in switched_off.get(place.scope, [])):
            continue  # a bounded region: switched off again later in the same function
        yield Violation(
            node=call,
            message=(
                f"'{facts.describe(call)}' turns on autograd anomaly detection: every operation records "
                "a traceback and every backward checks for NaNs, slowing training several times over"
            ),
            confidence=confidence,
            statement=place.statement(),
            fix=_switch_off(facts, place),
        )


def _confidence(facts: ModuleFacts, call: cst.Call) -> Confidence | None:
    qualified = facts.imports.resolve(call.func)
    if qualified in DETECT_ANOMALY:
        return Confidence.HIGH
    if qualified in LIGHTNING_TRAINERS:
        flag = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "detect_anomaly"), None)
        return Confidence.HIGH if flag is not None and is_literal(flag, "True") else None
    enabled = _enabled_by(call)
    if enabled is True:
        return Confidence.HIGH
    if enabled is None:
        flag = call_argument(call, 0, "mode")
        return None if flag is None or _mentions_debug(flag) else Confidence.MEDIUM
    return None


def _is_debug_context(place: Place) -> bool:
    """In a test or debug function (its decorators included), or under a debug guard."""
    for node in place.path:
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            name = node.name.value
            if _TEST_FUNCTION.match(name) or _DEBUG_WORD.search(name):
                return True
    return any(_mentions_debug(test) for test in place.all_guards())


def _switch_off(facts: ModuleFacts, place: Place) -> SuggestedFix | None:
    """Remove the ``set_detect_anomaly(True)`` statement, unwrap ``with detect_anomaly():``, drop
    Lightning's ``detect_anomaly=True``; no fix for the decorator.

    Display only: whether the switch is a leftover or a debugging aid someone still needs is the
    author's call, and the usual repair is a debug flag around it, which leaklint cannot name.
    """
    call = place.node
    assert isinstance(call, cst.Call)
    parent = place.parent
    edit: EditSpec | None = None
    if facts.imports.resolve(call.func) in LIGHTNING_TRAINERS:
        argument = next(a for a in call.args if a.keyword is not None and a.keyword.value == "detect_anomaly")
        edit = drop_argument(facts.module, call, argument)
        title = "Drop 'detect_anomaly=True'"
    elif isinstance(parent, cst.WithItem) and parent.asname is None and len(place.path) >= 2:
        statement = place.path[-2]
        if isinstance(statement, cst.With) and len(statement.items) == 1 and statement.asynchronous is None:
            edit = UnwrapWith(statement)
        title = f"Remove 'with {facts.describe(call)}:'"
    elif isinstance(parent, cst.Expr) and len(place.path) >= 3:
        line, block = place.path[-2], place.path[-3]
        if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1:
            alone = isinstance(block, cst.IndentedBlock) and len(block.body) == 1
            edit = RemoveStatement(line, keep_pass=alone)
        title = f"Remove '{facts.describe(call)}'"
    if edit is None:
        return None
    return SuggestedFix(title, Applicability.DISPLAY_ONLY, (edit,))


def _enabled_by(call: cst.Call) -> bool | None:
    """True / False for ``set_detect_anomaly(True/False)``, None for a runtime value."""
    flag = call_argument(call, 0, "mode")
    if flag is None:
        return None
    if is_literal(flag, "True", "1"):
        return True
    if is_literal(flag, "False", "0"):
        return False
    return None


def _starts_before(first: Place, second: Place) -> bool:
    """Whether ``first`` comes before ``second`` in source order (they share a scope)."""
    scope = first.scope if first.scope is not None else first.chain[0]
    for node in walk(scope):
        if node is first.node:
            return True
        if node is second.node:
            return False
    return False
