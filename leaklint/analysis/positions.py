"""Where nodes are in the source, paying for positions only in the statements that hold them.

libcst's ``PositionProvider`` generates code for the whole module; on a large file that costs
more than the parse, for a handful of findings. So each top-level statement that holds a wanted
node is positioned on its own: wrapped in a one-statement ``Module`` (the same nodes, not copies)
and resolved with libcst's public ``MetadataWrapper`` and ``PositionProvider``, its lines then
shifted by the lines of the statements before it. A top-level statement starts at column 0, so
the ranges are exactly those a whole-module resolve gives. The other statements are only
counted in lines.
"""

from __future__ import annotations

from typing import Iterable

import libcst as cst
from libcst.metadata import CodePosition, CodeRange, MetadataWrapper, PositionProvider

from leaklint.analysis.walk import walk


def node_positions(module: cst.Module, nodes: Iterable[cst.CSTNode]) -> dict[cst.CSTNode, CodeRange]:
    """Source ranges of ``nodes`` (those found in ``module``; the others are left out)."""
    wanted = set(nodes)
    found: dict[cst.CSTNode, CodeRange] = {}
    lines_before = sum(_line_breaks(module.code_for_node(line)) for line in module.header)
    for statement in module.body:
        if len(found) == len(wanted):
            break
        inside = [node for node in walk(statement) if node in wanted]
        if inside:
            ranges = _statement_positions(module, statement)
            for node in inside:
                where = ranges[node]
                found[node] = CodeRange(
                    CodePosition(where.start.line + lines_before, where.start.column),
                    CodePosition(where.end.line + lines_before, where.end.column),
                )
        lines_before += _line_breaks(module.code_for_node(statement))
    return found


def _statement_positions(module: cst.Module, statement: cst.CSTNode) -> dict[cst.CSTNode, CodeRange]:
    """Positions of every node of one top-level statement, counted from its first line."""
    alone = cst.Module(
        body=[statement],  # type: ignore[list-item]
        header=(),
        footer=(),
        encoding=module.encoding,
        default_indent=module.default_indent,
        default_newline=module.default_newline,
    )
    return MetadataWrapper(alone, unsafe_skip_copy=True).resolve(PositionProvider)  # type: ignore[return-value]


def _line_breaks(code: str) -> int:
    """Lines end at ``\n``, ``\r\n`` or a lone ``\r`` (old Mac files), as Python counts them."""
    return code.count("\n") + code.count("\r") - code.count("\r\n")


class Lines:
    """The lines nodes start on, for messages ("the loop at line 80"): each top-level statement
    is positioned once, the first time a node in it is asked for, and its nodes' lines are kept.
    (Positioning is the costly part: a rule that names a loop per call inside a large class
    would otherwise position that class again for every message.)"""

    def __init__(self, module: cst.Module) -> None:
        self._module = module
        self._lines: dict[cst.CSTNode, int] = {}
        self._positioned: set[int] = set()  # id() of the top-level statements already positioned

    def line_of(self, node: cst.CSTNode) -> int | None:
        """The line ``node`` starts on, or None when it is not part of the module."""
        line = self._lines.get(node)
        if line is not None:
            return line
        module = self._module
        lines_before = sum(_line_breaks(module.code_for_node(line)) for line in module.header)
        for statement in module.body:
            if id(statement) not in self._positioned and any(inner is node for inner in walk(statement)):
                self._positioned.add(id(statement))
                for inner, where in _statement_positions(module, statement).items():
                    self._lines.setdefault(inner, where.start.line + lines_before)
                return self._lines.get(node)
            lines_before += _line_breaks(module.code_for_node(statement))
        return None
