"""How LL404 anomaly-detection-enabled finds its violations: ``check`` and its helpers.

The rule itself (documentation, examples, gate and runtime repro) is
:mod:`leaklint.rules.ll404_anomaly_detection_enabled`. Only files that pass the gate import this
module, and with it libcst and the analysis.
"""

from __future__ import annotations

import re
from typing import Iterator

from leaklint.analysis import nodes as cst
from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.places import Place
from leaklint.analysis.syntax import call_argument, is_literal
from leaklint.analysis.walk import dotted_names_in, walk
from leaklint.findings import Applicability, Confidence
from leaklint.fixspec import EditSpec, RemoveStatement, SuggestedFix, UnwrapWith, drop_argument
from leaklint.rule import Violation


SET_DETECT_ANOMALY = frozenset({"torch.autograd.set_detect_anomaly", "torch.autograd.anomaly_mode.set_detect_anomaly"})
DETECT_ANOMALY = frozenset({"torch.autograd.detect_anomaly", "torch.autograd.anomaly_mode.detect_anomaly"})
#: Lightning trainers whose ``detect_anomaly=True`` turns on torch's anomaly mode for every step.
LIGHTNING_TRAINERS = frozenset(
    {
        "pytorch_lightning.Trainer", "pytorch_lightning.trainer.Trainer", "pytorch_lightning.trainer.trainer.Trainer",
        "lightning.Trainer", "lightning.pytorch.Trainer", "lightning.pytorch.trainer.Trainer",
    }
)
#: A name or string in a guard or flag that says "only while debugging".
_DEBUG_WORD = re.compile(r"debug|anomal", re.IGNORECASE)
_TEST_FUNCTION = re.compile(r"^_*test", re.IGNORECASE)


def _mentions_debug(node: cst.CSTNode) -> bool:
    """A debug flag: ``args.debug``, ``cfg.detect_anomaly``, ``os.environ.get("DEBUG")``..."""
    if any(_DEBUG_WORD.search(name) for name in dotted_names_in(node)):
        return True
    return any(isinstance(n, cst.SimpleString) and _DEBUG_WORD.search(n.value) for n in walk(node))


def check(facts: ModuleFacts) -> Iterator[Violation]:
    """LL404's violations in one file (``AnomalyDetectionEnabled.check``)."""
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
