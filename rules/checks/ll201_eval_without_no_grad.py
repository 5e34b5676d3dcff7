"""How LL201 eval-without-no-grad finds its violations: ``check`` and its helpers.

The rule itself (documentation, examples, gate and runtime repro) is
:mod:`leaklint.rules.ll201_eval_without_no_grad`. Only files that pass the gate import this
module, and with it libcst and the analysis.
"""

from __future__ import annotations

from typing import Iterator

from leaklint.analysis import nodes as cst
from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.provenance import ModelCall
from leaklint.analysis.structure import GradMode, bound_names
from leaklint.analysis.walk import walk
from leaklint.findings import Applicability, Confidence
from leaklint.fixspec import AddDecorator, SuggestedFix, WrapInWith, torch_reference
from leaklint.rule import Violation


def _feeds_backward(facts: ModuleFacts, call: ModelCall) -> bool:
    statement = call.statement
    if statement is None or not isinstance(statement.node, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
        return False
    targets = statement.node.targets if isinstance(statement.node, cst.Assign) else [statement.node]
    names = {name for target in targets for name in bound_names(target.target)}
    return bool(names & facts.summary(statement.function).backward_consumed)


def check(facts: ModuleFacts) -> Iterator[Violation]:
    """LL201's violations in one file (``EvalWithoutNoGrad.check``)."""
    reported = set()
    for call in facts.model_calls():
        if call.eval_reason is None or call.grad is not GradMode.ENABLED:
            continue
        if _feeds_backward(facts, call):
            continue  # its output is differentiated: this forward pass is training
        where = call.statement.line if call.statement is not None else call.node
        if where in reported:
            continue
        reported.add(where)
        if call.eval_reason == "eval-mode":
            confidence = Confidence.HIGH
            why = f"after {call.callee}.eval()"
        else:
            confidence = call.model.confidence
            why = f"in evaluation function '{call.statement.function.name}'" if call.statement else "in evaluation code"
        name = call.callee or facts.describe(call.node.func)
        yield Violation(
            node=call.node,
            message=(
                f"'{name}' runs {why} with gradients enabled; every forward pass records an "
                "autograd graph that is never used"
            ),
            confidence=confidence,
            statement=call.statement.line if call.statement is not None else None,
            fix=_no_grad_fix(facts, call),
        )


#: Code that needs gradients during evaluation (adversarial examples, saliency maps, training
#: mixed in): disabling gradients around it would break it, so no fix is offered there.
_NEEDS_GRAD = ("backward", "autograd", "requires_grad", ".grad", ".step(")


def _no_grad_fix(facts: ModuleFacts, call: ModelCall) -> SuggestedFix | None:
    """Decorate an evaluation function with ``@torch.no_grad()``, or wrap the evaluation loop
    (the outermost loop around the call that does no training) in ``with torch.no_grad():``.

    Unsafe: it changes what runs under autograd, which code relying on gradients in evaluation
    would notice. No fix at all where the code visibly needs gradients.
    """
    fact = call.statement
    if fact is None or fact.line is None:
        return None
    function = fact.function.node
    if function is not None and function.asynchronous is None and not _needs_grad(facts, function) and fact.function.is_eval_named:
        # The decorator is evaluated where the ``def`` statement runs, not in the function.
        no_grad = torch_reference(facts, "no_grad", facts.imports.scope_around(function))
        if no_grad is not None:
            edit = AddDecorator(function, f"{no_grad.code}()")
            title = f"Decorate '{fact.function.name}' with @{no_grad.code}()"
            return SuggestedFix(title, Applicability.UNSAFE, (edit,), no_grad.imports)
    no_grad = torch_reference(facts, "no_grad", function)
    if no_grad is None:
        return None
    target = next((loop.node for loop in fact.loops if not (loop.has_backward or loop.has_optimizer_step)), fact.line)
    if _needs_grad(facts, target) or not any(node is call.node for node in walk(target)):
        return None
    edit = WrapInWith(target, f"{no_grad.code}()")
    title = f"Wrap the {'loop' if target is not fact.line else 'statement'} in 'with {no_grad.code}():'"
    return SuggestedFix(title, Applicability.UNSAFE, (edit,), no_grad.imports)


def _needs_grad(facts: ModuleFacts, node: cst.CSTNode) -> bool:
    code = facts.module.code_for_node(node)
    return any(word in code for word in _NEEDS_GRAD)
