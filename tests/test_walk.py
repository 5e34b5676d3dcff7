"""The fast traversal (leaklint/analysis/walk.py) against plain, slow references: the shortcuts it
takes for speed (leaf types, handlers looked up per class) must not change what it visits."""

from __future__ import annotations

import contextlib
import dataclasses
import pathlib
import textwrap

import libcst as cst
import pytest

from leaklint.analysis import walk

ROOT = pathlib.Path(__file__).resolve().parent.parent

#: Syntax the repository's own files may not use: f-strings with format specs, match, walrus,
#: lambdas, star-expressions, decorators, try/except*, type parameters.
SAMPLE = textwrap.dedent(
    '''
    import torch as th, os.path
    from torch.nn import functional as F
    @th.no_grad()
    def f(a, /, b: int = 1, *args, c, **kw) -> None:
        global g
        x = f"{a!r:>{b}} {c=}" "tail"
        if (y := [i * 2 for i in args if i]) and {k: v for k, v in kw.items()}:
            return lambda q, *r: q + 1j
        match a:
            case [1, *rest] | {"k": _, **others}:
                pass
            case Point(x=0, y=yy) as p:
                del p
        try:
            raise ValueError from None
        except* (TypeError, ValueError) as group:
            pass
    class C[T](Base, metaclass=M):
        async def g(self):
            async with a as (b, c), d:
                async for i in e:
                    yield await i[1:2, ::3]
    '''
)


def sources() -> list[str]:
    files = sorted((ROOT / "leaklint" / "analysis").glob("*.py")) + sorted((ROOT / "fixtures").glob("*.py"))
    return [SAMPLE] + [path.read_text() for path in files]


def reference_children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """Every node held by a field the walk does not skip on purpose, found by looking at each value."""
    found: list[cst.CSTNode] = []
    for f in dataclasses.fields(node):
        if f.name in walk._SKIPPED_FIELDS or f.name.startswith("whitespace"):
            continue
        value = getattr(node, f.name)
        if isinstance(value, (list, tuple)):
            found.extend(item for item in value if isinstance(item, cst.CSTNode))
        elif isinstance(value, cst.CSTNode):
            found.append(value)
    return found


def reference_walk(node: cst.CSTNode) -> list[cst.CSTNode]:
    found = [node]
    for child in reference_children(node):
        found.extend(reference_walk(child))
    return found


@pytest.mark.parametrize("cached", [False, True])
def test_children_are_what_every_field_holds(cached):
    for source in sources():
        module = cst.parse_module(source)
        with walk.children_cached() if cached else contextlib.nullcontext():
            everything = reference_walk(module)
            assert list(walk.walk(module)) == everything
            for node in everything:
                assert walk.children(node) == reference_children(node)


def test_leaf_types_have_no_fields_to_look_at():
    assert walk._child_fields(cst.Name) == ()
    assert walk._child_fields(cst.SimpleString) == ()
    assert walk._child_fields(cst.Module) == ("body",)  # not `has_trailing_newline`, a bool


class _Recorder(walk.Walker):
    def __init__(self) -> None:
        self.events: list[tuple[str, cst.CSTNode]] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.events.append(("visit", node))

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.events.append(("leave", original_node))

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        self.events.append(("visit", node))
        return False  # prunes: nothing inside a lambda is seen

    def leave_Lambda(self, original_node: cst.Lambda) -> None:
        self.events.append(("leave", original_node))

    def visit_Name(self, node: cst.Name) -> None:
        self.events.append(("visit", node))


def reference_events(node: cst.CSTNode) -> list[tuple[str, cst.CSTNode]]:
    events: list[tuple[str, cst.CSTNode]] = []
    if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.Name)):
        events.append(("visit", node))
    if not isinstance(node, cst.Lambda):
        for child in reference_children(node):
            events.extend(reference_events(child))
    if isinstance(node, (cst.FunctionDef, cst.Lambda)):
        events.append(("leave", node))
    return events


def test_a_walker_visits_and_leaves_in_source_order_and_prunes_where_asked():
    for source in sources():
        module = cst.parse_module(source)
        recorder = _Recorder()
        recorder.run(module)
        assert recorder.events == reference_events(module)


def test_node_types_checked_by_exact_type_have_no_subclasses():
    # dotted_name, dotted_names_in and the scans compare type(node) with these classes.
    for node_type in (cst.Name, cst.Attribute, cst.Call):
        assert node_type.__subclasses__() == []

