"""Looking up one line of a linted file, shared by the text snippets and the SARIF fingerprints."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Mapping

if TYPE_CHECKING:
    from leaklint.notebook import FilePositions, Notebook

# Python (and libcst) end lines at \n, \r\n or \r only; str.splitlines() would also split at form
# feeds and other separators and so disagree with the engine's line numbers.
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


class SourceLines:
    """Splits each file's text into lines once, however many findings point into it."""

    def __init__(self, sources: Mapping[str, str]) -> None:
        self._sources = sources
        self._split: dict[tuple[str, int | None], list[str] | None] = {}
        self._notebooks: dict[str, Notebook | None] = {}
        self._positions: dict[str, FilePositions | None] = {}

    def get(self, path: str, line: int, cell: int | None = None) -> str | None:
        """Line ``line`` (1-based) of ``path`` without its line break, or of cell ``cell`` of the
        notebook ``path``; None when not known."""
        key = (path, cell)
        if key not in self._split:
            self._split[key] = self._lines(path, cell)
        lines = self._split[key]
        if lines is None:
            return None
        return lines[line - 1] if 1 <= line <= len(lines) else None

    def file_positions(self, path: str) -> FilePositions | None:
        """Where the cells of the notebook ``path`` are in its file; None when its text is not
        known or is not a notebook."""
        if path not in self._positions:
            text = self._sources.get(path)
            found = self._notebook(path, text) if text is not None else None
            if found is None:
                self._positions[path] = None
            else:
                from leaklint.notebook import FilePositions, NotebookError

                try:
                    self._positions[path] = FilePositions(found)
                except (NotebookError, ValueError, IndexError):
                    self._positions[path] = None
        return self._positions[path]

    def _lines(self, path: str, cell: int | None) -> list[str] | None:
        text = self._sources.get(path)
        if text is None:
            return None
        if cell is not None:
            found = self._notebook(path, text)
            source = found.cell(cell) if found is not None else None
            if source is None:
                return None
            text = source.source
        return _LINE_BREAK.split(text)

    def _notebook(self, path: str, text: str) -> Notebook | None:
        if path not in self._notebooks:
            from leaklint.notebook import Notebook, NotebookError

            try:
                self._notebooks[path] = Notebook.parse(text)
            except NotebookError:
                self._notebooks[path] = None
        return self._notebooks[path]
