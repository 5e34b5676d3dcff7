"""LL401 non-inplace-op: out-of-place tensor updates where nothing needs the old value."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from leaklint.findings import Confidence, Severity
from leaklint.rule import Rule, Violation

if TYPE_CHECKING:
    from leaklint.analysis.facts import ModuleFacts
    from leaklint.prefilter import SyntaxShape


class NonInplaceOp(Rule):
    code = "LL401"
    name = "non-inplace-op"
    severity = Severity.PEAK
    default_enabled = False
    fixable = True
    summary = "An out-of-place update (x = x * s) on a tensor no one else holds, where autograd needs no old value."
    help = "update the tensor in place (x.mul_(s), F.relu(x, inplace=True))"
    docs = """
## What it finds
`x = x + y`, `x = x * s`, `x = x - y`, `x = x / s`, `x = torch.relu(x)`, `x = F.relu(x)`,
`x = x.clamp(0, 1)` and similar, where the old value of `x` is a tensor freshly computed in the
same function that nothing else refers to (not a parameter, not aliased, not stored, not a view of
another tensor) and no autograd graph can need it: the statement runs under `torch.no_grad()` /
`torch.inference_mode()`, or the tensor never required grad. Also `nn.ReLU()` (and the other
activation modules with an `inplace` flag) constructed inside a no-grad block without
`inplace=True`.

This rule is **off by default** (enable it with `--select LL401` or `extend-select = ["LL401"]`):
the saving is bounded — one tensor's worth of peak memory per statement — and the rewrite is a
judgement call, so it belongs to a memory-tuning pass rather than to every commit.

## Why it matters
`x = x * s` allocates the result while the old `x` is still alive, so the statement's peak holds
both tensors; for large activations or post-processing of a whole batch of logits this doubles the
peak of that step. The in-place form writes into the existing storage.

## Example
```python
with torch.no_grad():
    logits = model(batch)
    probs = torch.softmax(logits, dim=-1)
    probs = probs * 100
```

## Use instead
```python
with torch.no_grad():
    logits = model(batch)
    probs = torch.softmax(logits, dim=-1)
    probs *= 100  # in place, like probs.mul_(100)
```

## Fix safety
`x = x * s` becomes `x *= s` (also `+`, `-`, `/`, and `x = s * x` for `*` and `+`);
`x = torch.relu(x)` and `x = x.relu()` become `x.relu_()`; `x = torch.clamp(x, 0, 1)` and
`x = x.clamp(0, 1)` become `x.clamp_(0, 1)`; `x = F.relu(x)` becomes `x = F.relu(x, inplace=True)`;
`nn.ReLU()` becomes `nn.ReLU(inplace=True)`. **Unsafe**: leaklint sees neither shapes nor dtypes,
and the in-place form fails where `y` broadcasts to a larger shape than `x`, or where the result
needs another dtype (`x /= 2` on an integer tensor); an activation module built with
`inplace=True` overwrites its input wherever it is used later (a residual `x + act(x)`). No fix
where the statement shares its line or spans several, or where `inplace` may already be passed by
position.

## Known false positives
leaklint cannot see shapes or dtypes: an in-place op fails loudly if `y` broadcasts to a larger
shape than `x`, or if `x` is an integer tensor and the result is a float (`x / 2`). Outside
`no_grad`, autograd may need the old value, so the rule never reports there unless the tensor was
created without history in the same function (`torch.zeros(...)`).

## References
- In-place operations and autograd: https://pytorch.org/docs/stable/notes/autograd.html#in-place-operations-with-autograd
- `inplace` flags of activation modules, e.g. https://pytorch.org/docs/stable/generated/torch.nn.ReLU.html
- Runtime repro: `leaklint verify LL401` measures the leaky and the fixed loop body.
"""
    VALID = (
        """
import torch
def scale(x):
    with torch.no_grad():
        x = x * 2
        return x
""",
        """
import torch
with torch.no_grad():
    out = model(batch)
    kept = out
    out = out * 2
""",
        """
import torch
out = model(batch)
out = out * 2
loss = out.sum()
loss.backward()
""",
        """
import torch
with torch.no_grad():
    out = model(batch)
    first = out[0]
    first = first + 1
    view = out.view(-1)
    view = view * 2
""",
        """
import torch.nn as nn
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.ReLU()
""",
        # inplace passed by position
        """
import torch
import torch.nn.functional as F
from torch import nn
with torch.no_grad():
    act = nn.LeakyReLU(0.1, True)
    out = model(batch)
    out = F.dropout(out, 0.5, False, True)
""",
    )
    INVALID = (
        """
import torch
import torch.nn.functional as F
with torch.no_grad():
    logits = model(batch)
    probs = F.softmax(logits, dim=-1)
    probs = probs * 100  # expect: LL401
    probs = torch.clamp(probs, 0, 99)  # expect: LL401
""",
        """
import torch
import torch.nn.functional as F
@torch.inference_mode()
def embed(model, batch):
    hidden = model(batch)
    hidden = F.relu(hidden)  # expect: LL401
    hidden = hidden.sigmoid()  # expect: LL401
    return hidden
""",
        """
import torch
from torch import nn
with torch.no_grad():
    act = nn.ReLU()  # expect: LL401
    mask = torch.zeros(8)
    mask = mask + 1  # expect: LL401
""",
    )

    @classmethod
    def may_report(cls, shape: SyntaxShape, min_confidence: Confidence) -> bool:
        """``x = x * s`` / ``x = f(x)`` re-assignments, or activation modules built without gradients."""
        return shape.inplace_candidate

    def check(self, facts: ModuleFacts) -> Iterator[Violation]:
        from leaklint.rules.checks.ll401_non_inplace_op import check

        return check(facts)

    class Repro(Rule.Repro):
        """`probs = probs * 100` allocates a second buffer while the first is alive, vs `probs.mul_(100)`."""

        def setup(self, ctx):
            import torch
            ctx.model = torch.nn.Linear(64, 4096).to(ctx.device)
            ctx.batch = torch.randn(128, 64, device=ctx.device)

        def leaky(self, ctx):
            import torch
            with torch.no_grad():
                logits = ctx.model(ctx.batch)
                probs = torch.softmax(logits, dim=-1)
                probs = probs * 100  # noqa: LL401 (the leaky variant)
                probs.argmax(1)

        def fixed(self, ctx):
            import torch
            with torch.no_grad():
                logits = ctx.model(ctx.batch)
                probs = torch.softmax(logits, dim=-1)
                probs.mul_(100)
                probs.argmax(1)
