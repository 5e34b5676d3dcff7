"""How LL403 zero-grad-keeps-grads finds its violations: ``check`` and its helpers.

The rule itself (documentation, examples, gate and runtime repro) is
:mod:`leaklint.rules.ll403_zero_grad_keeps_grads`. Only files that pass the gate import this
module, and with it libcst and the analysis.
"""

from __future__ import annotations

from typing import Iterator

from leaklint.analysis import nodes as cst
from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.names import dotted_name
from leaklint.analysis.places import Place
from leaklint.analysis.structure import bound_names
from leaklint.analysis.syntax import call_argument, is_literal, written_words
from leaklint.findings import Applicability, Confidence
from leaklint.fixspec import SuggestedFix, drop_argument
from leaklint.rule import Violation
from leaklint.rules.ll403_zero_grad_keeps_grads import ZEROING_METHODS


def _grad_owner(receiver: cst.BaseExpression) -> str | None:
    """``p`` for ``p.grad`` / ``p.grad.data``: the parameter whose gradient buffer is zeroed."""
    if isinstance(receiver, cst.Attribute) and receiver.attr.value == "data":
        receiver = receiver.value
    if isinstance(receiver, cst.Attribute) and receiver.attr.value == "grad":
        return dotted_name(receiver.value)
    return None


def check(facts: ModuleFacts) -> Iterator[Violation]:
    """LL403's violations in one file (``ZeroGradKeepsGrads.check``)."""
    for place in facts.index.calls_named("zero_grad", *ZEROING_METHODS):
        call = place.node
        assert isinstance(call, cst.Call)
        if not isinstance(call.func, cst.Attribute):
            continue
        if call.func.attr.value == "zero_grad":
            violation = _zero_grad_keeping(facts, place, call)
        else:
            violation = _manual_zeroing(facts, place, call)
        if violation is not None:
            yield violation


def _zero_grad_keeping(facts: ModuleFacts, place: Place, call: cst.Call) -> Violation | None:
    flag = call_argument(call, 0, "set_to_none")
    if flag is None or not is_literal(flag, "False", "0"):
        return None
    return Violation(
        node=call,
        message=(
            f"'{facts.describe(call)}' zeroes the gradients in place: every parameter keeps a "
            "gradient buffer allocated through the next forward pass, raising the peak"
        ),
        confidence=Confidence.HIGH,
        help=f"call {facts.describe(call.func)}() (set_to_none=True is the default since PyTorch 2.0)",
        statement=place.statement(),
        fix=_default_zero_grad(facts, call, flag),
    )


def _manual_zeroing(facts: ModuleFacts, place: Place, call: cst.Call) -> Violation | None:
    owner = _grad_owner(call.func.value)  # type: ignore[attr-defined]
    if owner is None:
        return None
    info = place.function(facts)
    if info is not None and "zero_grad" in info.name:
        return None  # an implementation of zero_grad: the choice belongs to its caller
    loop = next(
        (
            loop
            for loop in reversed(place.loop_nodes)
            if isinstance(loop, cst.For) and owner in bound_names(loop.target)
        ),
        None,
    )
    if loop is None:
        return None  # one tensor zeroed by hand (a tutorial-style leaf): bounded and deliberate
    over_parameters = any("param" in word.lower() for word in written_words(loop.iter))  # type: ignore[attr-defined]
    return Violation(
        node=call,
        message=(
            f"'{facts.describe(call)}' zeroes each gradient in place: the buffers stay allocated "
            "through the next forward pass, raising the peak"
        ),
        confidence=Confidence.MEDIUM if over_parameters else Confidence.LOW,
        help=f"set {owner}.grad = None instead (or call optimizer.zero_grad())",
        statement=place.statement(),
    )


def _default_zero_grad(facts: ModuleFacts, call: cst.Call, flag: cst.BaseExpression) -> SuggestedFix | None:
    """``zero_grad(set_to_none=False)`` → ``zero_grad()``.

    Unsafe: PyTorch documents that ``None`` gradients "change certain behaviors": code that reads
    ``p.grad`` finds ``None`` instead of zeros, and ``torch.optim`` skips a parameter whose
    gradient is ``None`` where it would step one whose gradient is zero (weight decay, momentum).
    """
    argument = next(arg for arg in call.args if arg.value is flag)
    edit = drop_argument(facts.module, call, argument)
    return SuggestedFix(f"Call {facts.describe(call.func)}() (set_to_none=True)", Applicability.UNSAFE, (edit,)) if edit else None
