"""Positions of findings (leaklint/analysis/positions.py) are libcst's, to the column.

``node_positions`` resolves libcst's ``PositionProvider`` only for the top-level statements that
hold a wanted node, each on its own and shifted to the line where it begins. Every node it positions must get exactly the
range libcst's ``PositionProvider`` gives it on the whole module.
"""

from __future__ import annotations

import sysconfig
import textwrap
from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from conftest import ROOT

from leaklint.analysis.positions import Lines, node_positions
from leaklint.analysis.walk import walk


def mismatches(source: str) -> list[str]:
    """Nodes whose range differs from libcst's (all nodes of the body asked for at once)."""
    module = cst.parse_module(source)
    nodes = [node for statement in module.body for node in walk(statement)]
    ours = node_positions(module, nodes)
    theirs = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    return [f"{type(node).__name__}: {ours.get(node)} != {theirs[node]}" for node in nodes if ours.get(node) != theirs[node]]


SOURCES = {
    "header comments, decorators and blank lines": """\
        #!/usr/bin/env python
        # a header comment

        import torch


        @torch.no_grad()
        @other
        def evaluate(model, batch):
            # a comment inside
            return model(batch)  # trailing


        class Trainer:
            '''doc'''

            def step(self):
                loss = (self.model(x)
                        + 1)
                loss.backward()
        """,
    "semicolons, one-line suites, continuation lines": """\
        a = 1; b = 2
        if a: b; c
        x = [
            1,
            2,
        ]; y = \\
            3
        """,
    "strings over several lines and f-strings": '''\
        text = """first
        second"""; after = f"{text!r:>{width}}"
        def f():
            return ("a"
                    "b"), f"""{
                1 + 2}"""
        ''',
    "tabs, form feeds, non-ASCII": "def f():\n\tx = 'é'  # ü\n\tif x:\n\t\treturn x\n\x0c\ndef g():\n    return 'ß' + x\n",
}


@pytest.mark.parametrize("name", SOURCES)
def test_positions_equal_libcsts(name):
    assert mismatches(textwrap.dedent(SOURCES[name])) == []


@pytest.mark.parametrize("newline", ["\r\n", "\r"])
def test_positions_equal_libcsts_with_other_line_endings(newline):
    source = textwrap.dedent(SOURCES["header comments, decorators and blank lines"]).replace("\n", newline)
    assert mismatches(source) == []


@pytest.mark.parametrize("path", sorted((ROOT / "fixtures").glob("*.py")), ids=lambda p: p.name)
def test_positions_equal_libcsts_on_every_fixture(path):
    assert mismatches(path.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("path", sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py"))[3::40], ids=lambda p: p.name)
def test_positions_equal_libcsts_on_a_sample_of_the_standard_library(path):
    assert mismatches(path.read_text(encoding="utf-8")) == []


def test_only_nodes_of_the_module_are_positioned():
    module = cst.parse_module("x = 1\ny = 2\n")
    stranger = cst.Name("elsewhere")
    second = module.body[1]
    assert node_positions(module, [stranger, second]) == {second: node_positions(module, [second])[second]}
    lines = Lines(module)
    assert lines.line_of(second) == 2
    assert lines.line_of(stranger) is None


def test_lines_position_each_top_level_statement_once_and_agree_with_node_positions():
    source = "import torch\n\n\nclass Trainer:\n    def fit(self, loader):\n        for x in loader:\n            for y in x:\n                print(y)\n\n\nwhile True:\n    break\n"
    module = cst.parse_module(source)
    trainer, loop = module.body[1], module.body[2]
    fit = trainer.body.body[0]
    outer = fit.body.body[0]
    inner = outer.body.body[0]
    lines = Lines(module)
    assert [lines.line_of(node) for node in (inner, outer, fit, loop)] == [7, 6, 5, 11]
    assert lines.line_of(inner) == node_positions(module, [inner])[inner].start.line
    assert lines._positioned == {id(trainer), id(loop)}  # the class once, for three of its nodes


def test_a_node_deep_in_a_later_statement_gets_its_absolute_line():
    source = "import torch\n\n\nclass A:\n    def f(self):\n        return torch.zeros(3)\n"
    module = cst.parse_module(source)
    call = next(node for node in walk(module) if isinstance(node, cst.Call))
    where = node_positions(module, [call])[call]
    assert (where.start.line, where.start.column, where.end.line, where.end.column) == (6, 15, 6, 29)


def test_declared_names_finds_declarations_in_nested_blocks_but_not_in_nested_functions():
    from leaklint.analysis.syntax import declared_names

    module = cst.parse_module(
        "def f():\n    global a\n    if x:\n        for i in y:\n            try:\n                nonlocal b\n"
        "            except E:\n                global c\n    def g():\n        global d\n"
        "    with z:\n        print(lambda: 0)\n        global e\n"
    )
    assert declared_names(module.body[0]) == ({"a", "c", "e"}, {"b"})
