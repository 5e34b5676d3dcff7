"""Looking up one line of a linted file, shared by the text snippets and the SARIF fingerprints."""

from __future__ import annotations

import re
from typing import Mapping

# Python (and libcst) end lines at \n, \r\n or \r only; str.splitlines() would also split at form
# feeds and other separators and so disagree with the engine's line numbers.
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


class SourceLines:
    """Splits each file's text into lines once, however many findings point into it."""

    def __init__(self, sources: Mapping[str, str]) -> None:
        self._sources = sources
        self._split: dict[str, list[str]] = {}

    def get(self, path: str, line: int) -> str | None:
        """Line ``line`` (1-based) of ``path`` without its line break; None when not known."""
        lines = self._split.get(path)
        if lines is None:
            text = self._sources.get(path)
            if text is None:
                return None
            lines = self._split[path] = _LINE_BREAK.split(text)
        return lines[line - 1] if 1 <= line <= len(lines) else None
