"""Replaying unchanged runs of the provenance pass (``leaklint.analysis.rounds``) changes nothing:
for every fixture and every rule example, the recording built with replay equals, in every
field and in order, the one built by interpreting every function in every round."""

from __future__ import annotations

import dataclasses
import textwrap
from pathlib import Path

import libcst as cst
import pytest

from conftest import ROOT

from leaklint.analysis import facts as facts_module
from leaklint.analysis import rounds
from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.structure import ClassInfo, FunctionInfo, LoopInfo
from leaklint.registry import all_rules

FIXTURES = sorted((ROOT / "fixtures").glob("*.py"))
EXAMPLES = [
    pytest.param(textwrap.dedent(snippet), id=f"{code}-{kind}-{index}")
    for code, rule in all_rules().items()
    for kind, snippets in (("valid", rule.VALID), ("invalid", rule.INVALID))
    for index, snippet in enumerate(snippets)
]
SOURCES = [pytest.param(path.read_text(), id=path.name) for path in FIXTURES] + EXAMPLES


def canonical(thing: object) -> object:
    """Everything in a recording as plain comparable data: every field of every value (``origin``
    and ``cls`` included), dicts as ordered item lists, objects of the module's structure by
    their syntax node (the two builds compared have structures of their own)."""
    if isinstance(thing, FunctionInfo):
        return ("function", thing.node, thing.name)
    if isinstance(thing, ClassInfo):
        return ("class", thing.node)
    if isinstance(thing, LoopInfo):
        return ("loop", thing.node, thing.iterates_data, thing.runs_model_on_items)
    if isinstance(thing, cst.CSTNode):
        return thing  # the same module: compared by identity
    if dataclasses.is_dataclass(thing) and not isinstance(thing, type):
        return (type(thing).__name__, tuple(canonical(getattr(thing, f.name)) for f in dataclasses.fields(thing)))
    if isinstance(thing, dict):
        return ("dict", [(canonical(key), canonical(value)) for key, value in thing.items()])
    if isinstance(thing, (list, tuple)):
        return (type(thing).__name__, [canonical(item) for item in thing])
    if isinstance(thing, (set, frozenset)):
        return ("set", frozenset(canonical(item) for item in thing))
    return thing


def build(module: cst.Module, replay: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[ModuleFacts, list[rounds.Rounds]]:
    made: list[rounds.Rounds] = []

    class Counted(rounds.Rounds):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            made.append(self)

    monkeypatch.setattr(rounds, "REPLAY", replay)
    monkeypatch.setattr(facts_module, "Rounds", Counted)
    return ModuleFacts(module), made


REPLAYED: list[int] = []


@pytest.mark.parametrize("source", SOURCES)
def test_replaying_unchanged_runs_changes_nothing(source, monkeypatch):
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError:
        pytest.skip("not Python that libcst parses")
    replayed, made = build(module, True, monkeypatch)
    interpreted, _ = build(module, False, monkeypatch)
    assert canonical(replayed._recording) == canonical(interpreted._recording)
    assert [canonical(loop) for loop in replayed.structure.loops.values()] == [
        canonical(loop) for loop in interpreted.structure.loops.values()
    ]
    REPLAYED.append(sum(r.replayed for r in made))


def test_the_comparison_above_saw_replays():
    """Guard against testing nothing: the fixtures and examples do replay some runs."""
    if not REPLAYED:
        pytest.skip("run together with the test above")
    assert sum(REPLAYED) > 0


def test_same_tells_apart_what_value_equality_ignores():
    from leaklint.analysis.values import DETACHED, Evidence, graph, instance, replace
    from leaklint.findings import Confidence

    loss = graph(Evidence.LOSS, Confidence.HIGH, "criterion(out, y)")
    renamed = replace(loss, origin="model(x)")
    assert loss == renamed and not rounds.same(loss, renamed)
    a, b = ClassInfo(None, "A", ()), ClassInfo(None, "B", ())  # type: ignore[arg-type]
    assert instance(a) == instance(b) and not rounds.same(instance(a), instance(b))
    pair, renamed_pair = replace(DETACHED, items=(loss, DETACHED)), replace(DETACHED, items=(renamed, DETACHED))
    assert pair == renamed_pair and not rounds.same(pair, renamed_pair)
    assert not rounds.same({"self.x": loss}, {"self.x": renamed})
    assert rounds.same((loss, True), (replace(loss), True))
