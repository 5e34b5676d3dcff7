"""LL401 non-inplace-op: out-of-place tensor updates where nothing needs the old value."""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from leaklint.analysis import torch_api
from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.names import dotted_name
from leaklint.analysis.provenance import StatementFact, binary_symbol
from leaklint.analysis.structure import GradMode
from leaklint.analysis.values import Kind
from leaklint.analysis.walk import calls_in, mentions
from leaklint.findings import Confidence, Severity
from leaklint.rule import Rule, Violation


class NonInplaceOp(Rule):
    code = "LL401"
    name = "non-inplace-op"
    severity = Severity.PEAK
    default_enabled = False
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
    probs.mul_(100)
```

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

    def check(self, facts: ModuleFacts) -> Iterator[Violation]:
        for fact in facts.statements():
            yield from self._module_constructions(facts, fact)
            rewrite = _inplace_rewrite(facts, fact)
            if rewrite is None:
                continue
            target, suggestion = rewrite
            old = fact.env.get(target)
            if old is None or not old.fresh or old.kind is not Kind.DETACHED or old.role is not None:
                continue
            yield Violation(
                node=fact.node,
                message=(
                    f"'{facts.describe(fact.node)}' allocates a new tensor while the old '{target}' is still "
                    f"alive; nothing else holds '{target}' and no graph needs it"
                ),
                confidence=Confidence.MEDIUM,
                help=f"update in place: {suggestion}",
                statement=fact.line,
            )

    def _module_constructions(self, facts: ModuleFacts, fact: StatementFact) -> Iterator[Violation]:
        if fact.grad is not GradMode.DISABLED:
            return
        for call in calls_in(fact.node):
            qualified = facts.imports.resolve(call.func) or ""
            module, _, name = qualified.rpartition(".")
            if module.startswith("torch.nn") and name in torch_api.MODULES_WITH_INPLACE:
                if not any(arg.keyword is not None and arg.keyword.value == "inplace" for arg in call.args):
                    yield Violation(
                        node=call,
                        message=f"'{facts.describe(call)}' is built under no_grad without inplace=True; its output can overwrite its input",
                        confidence=Confidence.MEDIUM,
                        help=f"pass inplace=True: {facts.describe(call.func)}(inplace=True)",
                        statement=fact.line,
                    )

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


def _inplace_rewrite(facts: ModuleFacts, fact: StatementFact) -> tuple[str, str] | None:
    """(target, suggested in-place statement) for ``x = <out-of-place op on x>``, else None."""
    node = fact.node
    if not isinstance(node, cst.Assign) or len(node.targets) != 1:
        return None
    target = node.targets[0].target
    if not isinstance(target, cst.Name):
        return None
    x = target.value
    value = node.value
    code = facts.module.code_for_node
    if isinstance(value, cst.BinaryOperation):
        symbol = binary_symbol(value.operator)
        method = torch_api.INPLACE_OPERATORS.get(symbol)
        if method is None:
            return None
        if dotted_name(value.left) == x and not mentions(value.right, x):
            return x, f"{x}.{method}({code(value.right)})"
        if symbol in torch_api.COMMUTATIVE_OPERATORS and dotted_name(value.right) == x and not mentions(value.left, x):
            return x, f"{x}.{method}({code(value.left)})"
        return None
    if not isinstance(value, cst.Call):
        return None
    positional = [a for a in value.args if a.keyword is None and not a.star]
    func = value.func
    qualified = facts.imports.resolve(func) or ""
    module, _, name = qualified.rpartition(".")
    rest = ", ".join(code(a).rstrip(", ") for a in value.args[1:])
    if positional and dotted_name(positional[0].value) == x and value.args[0] is positional[0]:
        if module == "torch" and name in torch_api.INPLACE_FUNCTIONS:
            return x, f"{x}.{name}_({rest})"
        if module == "torch.nn.functional" and name in torch_api.FUNCTIONAL_INPLACE:
            if any(a.keyword is not None and a.keyword.value == "inplace" for a in value.args):
                return None
            return x, f"{code(func)}({x}{', ' + rest if rest else ''}, inplace=True)"
    if isinstance(func, cst.Attribute) and dotted_name(func.value) == x and func.attr.value in torch_api.INPLACE_FUNCTIONS:
        arguments = ", ".join(code(a).rstrip(", ") for a in value.args)
        if not any(mentions(a.value, x) for a in value.args):
            return x, f"{x}.{func.attr.value}_({arguments})"
    return None
