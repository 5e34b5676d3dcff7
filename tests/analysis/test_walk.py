"""The fast traversal (leaklint/analysis/walk.py) against plain, slow references: the shortcuts it
takes for speed (leaf types, handlers looked up per class) must not change what it visits."""

from __future__ import annotations

import contextlib
import dataclasses
import pathlib
import textwrap

import libcst as cst
import pytest

from conftest import ROOT

from leaklint.analysis import walk


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
    assert walk._child_fields(cst.Module) == (("body", walk._NODES),)  # not `has_trailing_newline`, a bool
    how = dict(walk._child_fields(cst.Parameters))
    assert how["params"] == walk._NODES
    assert how["star_arg"] == walk._LOOK  # a Param, a ParamStar or MaybeSentinel.DEFAULT
    assert how["star_kwarg"] == walk._NODE  # a Param or None


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
    # dotted_name, dotted_names_in, written_words and the scans compare type(node) with these classes.
    for node_type in (cst.Name, cst.Attribute, cst.Call, cst.SimpleString, cst.FormattedStringText):
        assert node_type.__subclasses__() == []


class _LaterRecorder(walk.Walker):
    """Sees what _Recorder prunes (inside lambdas), and never prunes itself."""

    def __init__(self) -> None:
        self.events: list[tuple[str, cst.CSTNode]] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.events.append(("visit", node))

    def visit_Name(self, node: cst.Name) -> None:
        self.events.append(("visit", node))

    def leave_Call(self, original_node: cst.Call) -> None:
        self.events.append(("leave", original_node))


def test_one_walk_for_two_walkers_gives_each_what_its_own_walk_would():
    for source in sources():
        module = cst.parse_module(source)
        alone_now, alone_later = _Recorder(), _LaterRecorder()
        alone_now.run(module)
        alone_later.run(module)
        now, later = _Recorder(), _LaterRecorder()
        replay = walk.run_now_and_later(now, later, module)
        assert now.events == alone_now.events
        assert later.events == []  # nothing until the replay
        replay()
        assert later.events == alone_later.events


def test_a_walker_replayed_later_cannot_prune():
    module = cst.parse_module("f = lambda x: x\n")
    replay = walk.run_now_and_later(_LaterRecorder(), _Recorder(), module)
    with pytest.raises(TypeError):
        replay()


def _scans_summary(module: cst.Module, imports, structure) -> dict:
    """What the import map and the structure scan found, with nodes as their walk positions."""
    position = {id(node): index for index, node in enumerate(walk.walk(module))}

    def at(node):
        return None if node is None else position[id(node)]

    def function(info):
        return None if info is None else at(info.node)

    return {
        "aliases": list(imports._aliases.items()),
        "rebound": sorted(imports._rebound),
        "shadowed": sorted(at(node) for node in imports._shadowed),
        "scopes": [
            (at(node), list(scope.bound.items()), sorted(scope.declared_global), sorted(scope.declared_nonlocal))
            for node, scope in imports._scopes.items()
        ],
        "classes": [
            (at(node), info.base_names, info.is_module, info.is_lightning, [(m, at(n)) for m, n in info.methods.items()])
            for node, info in structure.classes.items()
        ],
        "functions": [
            (at(node), info.name, function(info.parent), info.params, info.decorator_grad, sorted(info.backward_names))
            for node, info in structure.functions.items()
        ],
        "loops": [
            (at(node), sorted(loop.rebound), loop.has_backward, loop.has_optimizer_step, loop.iterates_data,
             loop.contains_iteration_loop, loop.contains_data_loop, sorted(loop.item_names), sorted(loop.drawn), sorted(loop.chained))
            for node, loop in structure.loops.items()
        ],
        "module_functions": [(name, at(node)) for name, node in structure.module_functions.items()],
        "nested": [(function(outer), name, at(node)) for (outer, name), node in structure.nested_functions.items()],
        "evidence": sorted(structure.module_evidence),
        "external": sorted(structure.external_method_calls),
        "top": sorted(structure.top.backward_names),
    }


TRAINING = textwrap.dedent(
    '''
    import torch
    from torch import nn
    import lightning as L
    try:
        import apex
    except ImportError:
        apex = None

    class Net(nn.Module):
        def forward(self, x):
            return self.layer(x)

    class Lit(L.LightningModule):
        @torch.no_grad()
        def validation_step(self, batch, i):
            torch = batch
            return torch.sum()

    def train(model, loader, optimizer, epochs):
        total = 0
        for epoch in range(epochs):
            for x, y in loader:
                loss = model(x).sum()
                loss.backward()
                optimizer.step()
                total = total + loss
                out = model(x)
                def helper(t):
                    return [torch.relu(v) for v in t]
        model.eval()
        with torch.no_grad() as nothing:
            while True:
                torch.autograd.grad(loss, [x])

    def shadowed(loader):
        while True:
            torch.autograd.grad(loader, [loader])  # not torch's: known only once the walk is over
        torch = None
    '''
)


def test_imports_and_structure_from_one_walk_are_what_two_walks_find():
    from leaklint.analysis.names import ImportMap
    from leaklint.analysis.structure import scan_imports_and_structure, scan_structure

    for source in [TRAINING] + sources():
        module = cst.parse_module(source)
        imports = ImportMap.from_module(module)
        separate = _scans_summary(module, imports, scan_structure(module, imports))
        together = _scans_summary(module, *scan_imports_and_structure(module))
        assert together == separate
        assert together["loops"] or source is not TRAINING


def test_libcsts_concrete_node_classes_have_no_subclasses():
    """The analysis checks hot spots by exact type (``type(node) is cst.Call``): libcst's node
    classes are ABCs, and isinstance() on them runs Python code. That equals isinstance() only
    while no concrete class has subclasses (pattern-matching classes aside, never checked so)."""
    subclassed = {
        name
        for name, value in vars(cst).items()
        if isinstance(value, type)
        and issubclass(value, cst.CSTNode)
        and not name.startswith(("Base", "Match"))
        and value is not cst.CSTNode
        and value.__subclasses__()
    }
    assert subclassed == set()
