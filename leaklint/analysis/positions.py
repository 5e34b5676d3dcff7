"""Where nodes are in the source, paying for position metadata only where they are.

libcst's ``PositionProvider`` generates code for the whole module; on a large file that costs
more than the parse. Each top-level statement is positioned on its own instead (as a one-
statement module, which yields the same columns), shifted by the lines before it. The engine
positions findings this way, and rules that quote a line number in a message ask the same.
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
    line_offset = sum(_line_breaks(module.code_for_node(line)) for line in module.header)
    for statement in module.body:
        if len(found) == len(wanted):
            break
        inside = [node for node in walk(statement) if node in wanted]
        code = module.code_for_node(statement)
        if inside:
            alone = module.with_changes(body=[statement], header=[], footer=[])
            positions = MetadataWrapper(alone, unsafe_skip_copy=True).resolve(PositionProvider)
            for node in inside:
                where = positions[node]
                found[node] = CodeRange(
                    CodePosition(where.start.line + line_offset, where.start.column),
                    CodePosition(where.end.line + line_offset, where.end.column),
                )
        line_offset += _line_breaks(code)
    return found


def _line_breaks(code: str) -> int:
    """Lines end at ``\n``, ``\r\n`` or a lone ``\r`` (old Mac files), as Python counts them."""
    return code.count("\n") + code.count("\r") - code.count("\r\n")


def line_of(module: cst.Module, node: cst.CSTNode) -> int | None:
    """The line ``node`` starts on, or None when it is not part of ``module``."""
    where = node_positions(module, (node,)).get(node)
    return where.start.line if where is not None else None
