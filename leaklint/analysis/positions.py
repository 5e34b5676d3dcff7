"""Where nodes are in the source, paying for position metadata only where they are.

libcst's ``PositionProvider`` generates code for the whole module, and its ``MetadataWrapper``
then visits every node once more; on a large file that costs more than the parse. Here only the
top-level statements that hold a wanted node are generated with positions recorded, by the same
code generation state libcst's provider uses (so the ranges are libcst's, to the column), started
at the line the statement starts on. The other statements are only counted in lines. The engine
positions findings this way, and rules that quote a line number in a message ask the same.
"""

from __future__ import annotations

from typing import Callable, Iterable, Optional

import libcst as cst
from libcst.metadata import CodePosition, CodeRange
from libcst.metadata.position_provider import PositionProvidingCodegenState

from leaklint.analysis.walk import walk


def node_positions(
    module: cst.Module,
    nodes: Iterable[cst.CSTNode],
    *,
    wanted_in: Callable[[int, cst.CSTNode], list[cst.CSTNode]] | None = None,
) -> dict[cst.CSTNode, CodeRange]:
    """Source ranges of ``nodes`` (those found in ``module``; the others are left out).
    ``wanted_in(i, statement)`` lists the wanted nodes in the ``i``-th top-level statement (by
    default, a walk of it)."""
    wanted = set(nodes)
    if wanted_in is None:
        wanted_in = lambda _, statement: [node for node in walk(statement) if node in wanted]  # noqa: E731
    found: dict[cst.CSTNode, CodeRange] = {}
    line_offset = sum(_line_breaks(module.code_for_node(line)) for line in module.header)
    for index, statement in enumerate(module.body):
        if len(found) == len(wanted):
            break
        inside = wanted_in(index, statement)
        if not inside:
            line_offset += _line_breaks(module.code_for_node(statement))
            continue
        recorder = _PositionRecorder(module, first_line=line_offset + 1)
        statement._codegen(recorder)
        for node in inside:
            start, end = recorder.spans[node]
            found[node] = CodeRange(CodePosition(*start), CodePosition(*end))
        line_offset = recorder.line - 1
    return found


def tree_positions(tree: cst.Module, nodes: Iterable[cst.CSTNode]) -> dict[cst.CSTNode, CodeRange]:
    """:func:`node_positions` for a tree the analysis read, of either node family: a mirror
    tree (:mod:`leaklint.analysis.nodes`) is positioned through its nodes' libcst origins."""
    from leaklint.analysis import nodes as family

    if family.FAMILY == family.LIBCST:
        return node_positions(tree, nodes)
    # The walk reads the mirror's classes: find the wanted nodes on the mirror tree, position
    # their origins on libcst's.
    origins = {node: family.source_node(node) for node in nodes}
    origins = {node: origin for node, origin in origins.items() if origin is not None}

    def wanted_in(index: int, _: cst.CSTNode) -> list[cst.CSTNode]:
        return [origins[node] for node in walk(tree.body[index]) if node in origins]

    found = node_positions(family.source_node(tree), origins.values(), wanted_in=wanted_in)
    return {node: found[origin] for node, origin in origins.items() if origin in found}


_Point = tuple[int, int]


class _PositionRecorder(PositionProvidingCodegenState):
    """libcst's position-recording code generation, without the metadata provider around it.

    The ranges follow ``PositionProvidingCodegenState`` exactly: a node's range is the one it
    records as syntactic (``record_syntactic_position``, with the start or end taken from a child
    where the node says so), else everything it generated. Points are kept as tuples and turned
    into ``CodeRange`` only for the nodes asked for.
    """

    def __init__(self, module: cst.Module, *, first_line: int) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline, provider=None)  # type: ignore[arg-type]
        self.line = first_line
        self.spans: dict[cst.CSTNode, tuple[_Point, _Point]] = {}
        self._starts: list[_Point] = []

    def _update_position(self, value: str) -> None:
        if "\n" in value or "\r" in value:
            super()._update_position(value)
        else:
            self.column += len(value)

    def before_codegen(self, node: cst.CSTNode) -> None:
        self._starts.append((self.line, self.column))

    def after_codegen(self, node: cst.CSTNode) -> None:
        start = self._starts.pop()
        if node not in self.spans:  # a syntactic range recorded inside wins
            self.spans[node] = (start, (self.line, self.column))

    def record_syntactic_position(  # type: ignore[override]
        self, node: cst.CSTNode, *, start_node: Optional[cst.CSTNode] = None, end_node: Optional[cst.CSTNode] = None
    ) -> _SyntacticRange:
        return _SyntacticRange(self, node, start_node, end_node)


class _SyntacticRange:
    """``with state.record_syntactic_position(node, ...)``: a plain context manager (libcst's
    is a generator, and this runs for most nodes)."""

    __slots__ = ("recorder", "node", "start_node", "end_node", "start")

    def __init__(self, recorder: _PositionRecorder, node: cst.CSTNode, start_node: Optional[cst.CSTNode], end_node: Optional[cst.CSTNode]) -> None:
        self.recorder, self.node, self.start_node, self.end_node = recorder, node, start_node, end_node

    def __enter__(self) -> None:
        self.start = (self.recorder.line, self.recorder.column)

    def __exit__(self, *exc_info: object) -> None:
        recorder = self.recorder
        spans = recorder.spans
        start = spans[self.start_node][0] if self.start_node is not None else self.start
        end = spans[self.end_node][1] if self.end_node is not None else (recorder.line, recorder.column)
        spans[self.node] = (start, end)


def _line_breaks(code: str) -> int:
    """Lines end at ``\n``, ``\r\n`` or a lone ``\r`` (old Mac files), as Python counts them."""
    return code.count("\n") + code.count("\r") - code.count("\r\n")


def line_of(module: cst.Module, node: cst.CSTNode) -> int | None:
    """The line ``node`` starts on, or None when it is not part of ``module``."""
    where = tree_positions(module, (node,)).get(node)
    return where.start.line if where is not None else None
