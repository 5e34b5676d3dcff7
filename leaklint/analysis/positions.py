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


def line_of(module: cst.Module, node: cst.CSTNode) -> int | None:
    """The line ``node`` starts on, or None when it is not part of ``module``."""
    where = node_positions(module, (node,)).get(node)
    return where.start.line if where is not None else None
