"""One lint of one document as the features read it: which editor document (a file, or a notebook's
cell) each finding is in, and the line index to place it there.

Diagnostics, code actions and hovers all answer from the same snapshot, so a code action never
offers an edit computed on a different text than the diagnostic it fixes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator

from leaklint.findings import FileError, Finding
from leaklint.server.diagnostics import error_cell
from leaklint.server.linting import Linted
from leaklint.server.positions import UTF16, LineIndex


@dataclass
class Snapshot:
    """``linted`` for the document ``uri`` (a notebook's URI for a notebook), at ``version``."""

    uri: str
    linted: Linted
    version: int | None = None
    encoding: str = UTF16
    _indexes: dict[int | None, LineIndex] = field(default_factory=dict, repr=False)
    #: "Fix all safe" computed once per snapshot (code actions are asked for on every cursor move).
    fix_all: dict[str, str] | None = field(default=None, repr=False)

    @property
    def is_notebook(self) -> bool:
        return bool(self.linted.cells)

    def uris(self) -> list[str]:
        """Every editor document this snapshot has diagnostics for."""
        return [cell.uri for cell in self.linted.cells] if self.is_notebook else [self.uri]

    def cell_number(self, uri: str) -> int | None:
        """The 1-based number of the cell ``uri`` names (None for a file or an unknown cell)."""
        for number, cell in enumerate(self.linted.cells, start=1):
            if cell.uri == uri:
                return number
        return None

    def target(self, cell: int | None) -> tuple[str, str, LineIndex] | None:
        """(URI, text, line index) of the file, or of notebook cell ``cell``; None if it is gone."""
        if not self.is_notebook:
            cell = None
        elif cell is None or not 1 <= cell <= len(self.linted.cells):
            return None
        if cell not in self._indexes:
            text = self.linted.text if cell is None else self.linted.cells[cell - 1].text
            self._indexes[cell] = LineIndex(text, self.encoding)
        index = self._indexes[cell]
        uri = self.uri if cell is None else self.linted.cells[cell - 1].uri
        return uri, index.text, index

    def findings_for(self, uri: str) -> list[Finding]:
        """The findings shown in the editor document ``uri``."""
        if not self.is_notebook:
            return list(self.linted.findings) if uri == self.uri else []
        number = self.cell_number(uri)
        return [finding for finding in self.linted.findings if finding.cell == number] if number else []

    def errors_for(self, uri: str) -> Iterator[FileError]:
        """The errors shown in ``uri``: a notebook's go to the cell they name, else to its first cell."""
        if not self.is_notebook:
            yield from self.linted.errors
            return
        number = self.cell_number(uri)
        for error in self.linted.errors:
            if (error_cell(error) or 1) == number:
                yield error
