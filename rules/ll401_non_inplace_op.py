"""LL401 non-inplace-op: out-of-place tensor updates where nothing needs the old value."""

from __future__ import annotations

import ast
from typing import Iterator

import libcst as cst

from leaklint.analysis import torch_api
from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.names import dotted_name, mentions
from leaklint.analysis.provenance import StatementFact, binary_symbol
from leaklint.analysis.structure import GradMode
from leaklint.analysis.torch_api import TORCH_CODE
from leaklint.analysis.values import Kind
from leaklint.analysis.walk import calls_in
from leaklint.findings import Applicability, Confidence, Severity
from leaklint.fixes.spec import EditSpec, Replace, SuggestedFix, bare_code
from leaklint.gate import Syntax
from leaklint.rule import Measured, Rule, Violation


class NonInplaceOp(Rule):
    code = "LL401"
    name = "non-inplace-op"
    severity = Severity.PEAK
    fixable = True
    summary = "An out-of-place update (x = x * s) on a tensor no one else holds, where autograd needs no old value."
    help = "update the tensor in place (x.mul_(s), F.relu(x, inplace=True))"
    needs = TORCH_CODE & Syntax(ast.Assign)
    #: bench/realcode, both corpora (true, false, debatable), and bench/leaks (true, false), written by bench/measured.py --write.
    #: Off by default by choice (see the docs), though its precision clears the bar.
    default_enabled = False
    measured = Measured(realcode=(52, 0, 3), leaks=(0, 2))
    docs = """
## What it finds
`x = x + y`, `x = x * s`, `x = x - y`, `x = x / s`, `x = torch.relu(x)`, `x = F.relu(x)`,
`x = x.clamp(0, 1)` and similar, where the old value of `x` is a tensor freshly computed in the
same function that nothing else refers to (not a parameter, not aliased, not stored, not a view of
another tensor) and no autograd graph can need it: the statement runs under `torch.no_grad()` /
`torch.inference_mode()`, or the tensor never required grad (a tensor filled in place from one
that carries a graph, `buf.scatter_(1, idx, probs)` or `buf.copy_(hidden)` with gradients on,
carries that graph from then on, and ops such as `clamp` or `log` save it for their gradient: the
in-place form would free nothing). Also `nn.ReLU()` (and the other
activation modules with an `inplace` flag) constructed inside a no-grad block without
`inplace=True`.

This rule is **off by default** (enable it with `--select LL401` or `extend-select = ["LL401"]`):
the saving is bounded — one tensor's worth of peak memory per statement — and the rewrite is a
judgement call, so it belongs to a memory-tuning pass rather than to every commit. That is a
choice, not its precision: on both real-code corpora (stop 28) 38 of its findings were true, none
false and 3 debatable, which would put it on by the precision rule alone.

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
created without history in the same function (`torch.zeros(...)`), and not for `x * w`, `x / w`,
`x.mul(w)`, `x.div(w)`, `x.pow(w)` where `w` may require grad (a model output, a parameter, an
item of an `nn.ParameterDict` / `nn.ParameterList`, a value leaklint cannot place): autograd keeps
the old `x` for `w`'s gradient, and the in-place form would only make it clone `x`. The result
of `torch.as_tensor` / `torch.from_numpy` / `torch.frombuffer` is not fresh: it may be the caller's
own tensor or array. A method of a class that derives from another package's class (a
`transformers.Trainer`'s `compute_loss`) is not taken to run under `no_grad` because the file only
calls it from a `no_grad` block: the base class calls it too, with gradients on.

A tensor another name shares (`kept = x.detach()`, `flat = x.view(-1)`, `first = x[0]`) is not
fresh either: an in-place update would change what that name reads.

On bench/realcode nearly all findings are true, and most save little (a fresh tensor rewritten
under `no_grad`, a mask product, a logits tensor in a generation step). The false ones at first
are fixed: trl's GRPO loss code (a tensor autograd saved, or one whose detached alias is logged
afterwards), now seen to run with gradients, and the `clamp` of a sum in LLaMA-Factory's MoE block,
whose tensor was filled in place (`scatter_`) from the gate's softmax and so has history. A few
tiny true findings went with the first fix (0-d losses with history, `scales *
conditioning_scale` where the float factor is a value leaklint cannot place, a beam-search helper
of a `transformers` model class, which the base class may call). On the library code of
`bench/corpus.sh` (`bench/realcode/triage-libraries.jsonl`) the findings are true or debatable.
Still unseen: shapes (a `(B, 1)` loss times a `(B, T)` mask broadcasts, and the in-place form
raises) and dtypes.

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
        # a method of a class deriving from another package's class: the Trainer's training step
        # calls compute_loss with gradients on, not only prediction_step under no_grad (trl)
        """
import torch
from transformers import Trainer
class RatioTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False):
        return self._compute_loss(model, inputs)
    def _compute_loss(self, model, inputs):
        ratio = torch.exp(model(**inputs).logits)
        ratio = torch.clamp(ratio, max=2.0)
        return ratio.mean()
    def prediction_step(self, model, inputs, prediction_loss_only):
        with torch.no_grad():
            loss = self.compute_loss(model, inputs)
        return loss
""",
        # torch.as_tensor / torch.from_numpy return the caller's storage: clamp_ would change it (timm)
        """
import numpy as np
import torch
def class_weights(pos_counts, num_samples):
    counts = torch.as_tensor(pos_counts, dtype=torch.float64)
    counts = counts.clamp(min=1.0)
    labels = torch.from_numpy(np.load("labels.npy"))
    labels = labels - 1
    return num_samples / counts, labels
""",
        # a parameter of an nn.ParameterDict requires grad: mul saves the old scale for its
        # gradient, and mul_ would only make autograd clone it (peft boft)
        """
import torch
from torch import nn
class Scaled(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.scales = nn.ParameterDict({"a": nn.Parameter(torch.ones(n, 1))})
    def forward(self, x):
        scale = torch.ones((x.shape[-1], 1), device=x.device)
        for name in self.scales:
            s = self.scales[name]
            scale = s * scale
        return x * scale.T
""",
        # the same with an output of the model: its gradient needs the old mask
        """
import torch
def weighted(model, batch):
    weights = model(batch)
    mask = torch.ones(8)
    mask = mask * weights
    return mask.sum()
""",
        # loss.detach() shares loss's storage: div_ would rescale the logged value too (trl grpo)
        """
import torch
def scaled_loss(model, batch, n):
    with torch.no_grad():
        loss = torch.exp(model(batch).mean())
        logged = loss.detach()
        loss = loss / n
        return loss, logged
""",
        # zeros filled in place from the encoder's output carry its graph from then on; clamp
        # keeps its input for its gradient, so clamp_ would only make autograd copy it
        """
import torch
def pooled(encoder, batch, segment):
    hidden = encoder(batch)
    totals = torch.zeros(hidden.shape[0], hidden.shape[-1])
    totals.index_add_(0, segment, hidden.sum(1))
    totals = torch.clamp(totals, min=1e-6)
    return totals.log().sum()
""",
    )
    INVALID = (
        # the in-place fill takes a detached copy: the zeros still have no history
        """
import torch
def pooled_stats(encoder, batch, segment):
    hidden = encoder(batch)
    totals = torch.zeros(hidden.shape[0], hidden.shape[-1])
    totals.index_add_(0, segment, hidden.detach().sum(1))
    totals = torch.clamp(totals, min=1e-6)  # expect: LL401
    return totals.log().sum()
""",
        # with gradients on, an addition saves neither operand: add_ on the fresh tensor is fine
        """
import torch
def shifted(model, batch):
    out = model(batch)
    bias = torch.zeros(8)
    bias = bias + out  # expect: LL401
    return bias.sum()
""",
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
        return find_violations(facts)

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


# --- detection ------------------------------------------------------------------------------------
def find_violations(facts: ModuleFacts) -> Iterator[Violation]:
    """The violations in one file."""
    for fact in facts.statements():
        yield from _module_constructions(facts, fact)
        rewrite = _inplace_rewrite(facts, fact)
        if rewrite is None:
            continue
        target, suggestion, edit = rewrite
        old = fact.env.get(target)
        if old is None or not old.fresh or old.kind is not Kind.DETACHED or old.role is not None:
            continue
        if fact.grad is not GradMode.DISABLED and _saved_for_other_operand(facts, fact.node, target):
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
            fix=_fix(f"Update '{target}' in place", edit),
        )


def _module_constructions(facts: ModuleFacts, fact: StatementFact) -> Iterator[Violation]:
    if fact.grad is not GradMode.DISABLED:
        return
    for call in calls_in(fact.node):
        qualified = facts.imports.resolve(call.func) or ""
        module, _, name = qualified.rpartition(".")
        if module.startswith("torch.nn") and name in torch_api.MODULES_WITH_INPLACE:
            if not _passes_inplace(call, _MODULE_INPLACE_POSITION.get(name)):
                yield Violation(
                    node=call,
                    message=f"'{facts.describe(call)}' is built under no_grad without inplace=True; its output can overwrite its input",
                    confidence=Confidence.MEDIUM,
                    help=f"pass inplace=True: {facts.describe(call.func)}(inplace=True)",
                    statement=fact.line,
                    fix=_fix("Pass inplace=True", _with_inplace(facts, call, _MODULE_INPLACE_POSITION.get(name))),
                )


#: Where ``inplace`` sits among the positional parameters (``F.leaky_relu(x, 0.2, inplace)``):
#: a call that passes that many positional arguments already sets it, and gets no fix.
_FUNCTIONAL_INPLACE_POSITION = {
    "relu": 1, "relu6": 1, "selu": 1, "silu": 1, "mish": 1, "hardswish": 1, "hardsigmoid": 1,
    "elu": 2, "celu": 2, "leaky_relu": 2, "hardtanh": 3, "threshold": 3, "rrelu": 4,
    "dropout": 3, "alpha_dropout": 3, "dropout1d": 3, "dropout2d": 3, "dropout3d": 3,
}
_MODULE_INPLACE_POSITION = {
    "ReLU": 0, "ReLU6": 0, "SELU": 0, "SiLU": 0, "Mish": 0, "Hardswish": 0, "Hardsigmoid": 0,
    "ELU": 1, "CELU": 1, "LeakyReLU": 1, "Hardtanh": 2, "RReLU": 2, "Threshold": 2,
}


def _fix(title: str, edit: EditSpec | None) -> SuggestedFix | None:
    """Unsafe: leaklint sees neither shapes nor dtypes (``x *= y`` fails where ``y`` broadcasts
    to a larger shape, ``x /= 2`` on an integer tensor), nor an alias made in code it cannot follow."""
    return SuggestedFix(title, Applicability.UNSAFE, (edit,)) if edit is not None else None


def _inplace_rewrite(facts: ModuleFacts, fact: StatementFact) -> tuple[str, str, EditSpec | None] | None:
    """(target, suggested in-place code, the edit) for ``x = <out-of-place op on x>``, else None.

    ``x = x * s`` becomes ``x *= s``, ``x = torch.relu(x)`` / ``x = x.relu()`` become ``x.relu_()``,
    ``x = F.relu(x)`` becomes ``x = F.relu(x, inplace=True)``. The edit is None where the
    statement shares its line or spans several (the rewrite would not be a plain replacement).
    """
    node = fact.node
    if not isinstance(node, cst.Assign) or len(node.targets) != 1:
        return None
    target = node.targets[0].target
    if not isinstance(target, cst.Name):
        return None
    x = target.value
    value = node.value
    code = facts.module.code_for_node

    def statement(new: str) -> tuple[str, str, EditSpec | None]:
        # Rendering the statement costs a code generation: only for a real candidate.
        plain = isinstance(node.semicolon, cst.MaybeSentinel) and "\n" not in code(node)
        return x, new, Replace(node, new) if plain else None

    if isinstance(value, cst.BinaryOperation):
        symbol = binary_symbol(value.operator)
        if symbol not in torch_api.INPLACE_OPERATORS:
            return None
        if dotted_name(value.left) == x and not mentions(value.right, x):
            return statement(f"{x} {symbol}= {code(value.right)}")
        if symbol in torch_api.COMMUTATIVE_OPERATORS and dotted_name(value.right) == x and not mentions(value.left, x):
            return statement(f"{x} {symbol}= {code(value.left)}")
        return None
    if not isinstance(value, cst.Call):
        return None
    if any(a.keyword is not None and a.keyword.value == "out" for a in value.args):
        return None
    positional = [a for a in value.args if a.keyword is None and not a.star]
    func = value.func
    qualified = facts.imports.resolve(func) or ""
    module, _, name = qualified.rpartition(".")
    if positional and dotted_name(positional[0].value) == x and value.args[0] is positional[0]:
        if module == "torch" and name in torch_api.INPLACE_FUNCTIONS:
            method = cst.Call(cst.Attribute(cst.Name(x), cst.Name(f"{name}_")), args=value.args[1:])
            return statement(code(method))
        if module == "torch.nn.functional" and name in torch_api.FUNCTIONAL_INPLACE:
            position = _FUNCTIONAL_INPLACE_POSITION.get(name)
            if _passes_inplace(value, position):
                return None
            edit = _with_inplace(facts, value, position)
            return x, f"{x} = {edit.code}" if edit is not None else f"{code(func)}({x}, ..., inplace=True)", edit
    if isinstance(func, cst.Attribute) and dotted_name(func.value) == x and func.attr.value in torch_api.INPLACE_FUNCTIONS:
        if not any(mentions(a.value, x) for a in value.args):
            method = value.with_changes(func=func.with_changes(attr=cst.Name(f"{func.attr.value}_")), lpar=[], rpar=[])
            return statement(code(method))
    return None


#: Out-of-place ops whose gradient for the other operand is computed from ``x`` (``x * w``:
#: d/dw is ``grad * x``): with that operand requiring grad, autograd saves the old ``x``, and the
#: in-place form only makes it clone ``x`` first. ``+`` and ``-`` save nothing.
_SAVING_OPERATORS = frozenset({"*", "/"})
_SAVING_FUNCTIONS = frozenset({"mul", "div", "pow"})


def _saved_for_other_operand(facts: ModuleFacts, node: cst.BaseSmallStatement, target: str) -> bool:
    """``x = x * w`` with gradients on, where ``w`` may require grad (a tensor with history, a
    parameter, a value leaklint cannot place): the graph keeps the old ``x``, nothing is saved."""
    value = node.value  # type: ignore[attr-defined]
    if isinstance(value, cst.BinaryOperation):
        if binary_symbol(value.operator) not in _SAVING_OPERATORS:
            return False
        others = [value.right if dotted_name(value.left) == target else value.left]
    elif isinstance(value, cst.Call):
        func = value.func
        name = func.attr.value if isinstance(func, cst.Attribute) else (facts.imports.resolve(func) or "").rpartition(".")[2]
        if name not in _SAVING_FUNCTIONS:
            return False
        others = [arg.value for arg in value.args if dotted_name(arg.value) != target]
    else:
        return False
    return any(facts.value(other).kind in (Kind.GRAPH, Kind.UNKNOWN) for other in others)


def _passes_inplace(call: cst.Call, position: int | None) -> bool:
    """``inplace=`` is passed by keyword, or by position (``nn.LeakyReLU(0.1, True)``)."""
    if any(arg.keyword is not None and arg.keyword.value == "inplace" for arg in call.args):
        return True
    return position is not None and sum(1 for arg in call.args if arg.keyword is None and not arg.star) > position


def _with_inplace(facts: ModuleFacts, call: cst.Call, position: int | None) -> Replace | None:
    """``call`` with ``inplace=True`` added; None when ``inplace`` may already be passed by
    position (or ``*args``), or the call spans several lines."""
    code = bare_code(facts.module, call)
    if position is None or "\n" in code or any(a.star for a in call.args) or _passes_inplace(call, position):
        return None
    args = list(call.args)
    if args:
        args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    args.append(cst.Arg(cst.Name("True"), keyword=cst.Name("inplace"), equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))))
    return Replace(call, bare_code(facts.module, call.with_changes(args=args)))
