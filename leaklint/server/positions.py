"""Positions between leaklint and the client: lines split as LSP splits them, columns counted in
the encoding the client negotiated (UTF-16 unless it asked for another).

leaklint counts columns in code points and lines at ``\\r\\n``, ``\\r`` and ``\\n`` (as Python
does); LSP counts lines the same way but columns in UTF-16 code units by default. A character
outside the Basic Multilingual Plane (an emoji in a comment) is two UTF-16 units, so converting by
hand keeps every later column on the line right. pygls' own document lines split at more
characters (form feeds, U+2028), which would put a finding after one on the wrong line.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from leaklint.fixes.apply import line_starts

UTF8, UTF16, UTF32 = "utf-8", "utf-16", "utf-32"


def _units(text: str, encoding: str) -> int:
    """The length of ``text`` in the client's code units."""
    if encoding == UTF32:
        return len(text)
    if encoding == UTF8:
        return len(text.encode("utf-8", "surrogatepass"))
    return len(text) + sum(1 for char in text if ord(char) > 0xFFFF)


@dataclass
class LineIndex:
    """Offsets, lines and client columns of one text (a file, or one notebook cell)."""

    text: str
    encoding: str = UTF16
    starts: list[int] = field(init=False)

    def __post_init__(self) -> None:
        self.starts = line_starts(self.text)

    def line_end(self, line: int) -> int:
        """Offset of the end of 0-based ``line``'s content (before its line break)."""
        end = self.starts[line + 1] if line + 1 < len(self.starts) else len(self.text)
        while end > self.starts[line] and self.text[end - 1] in "\r\n":
            end -= 1
        return end

    def position(self, offset: int) -> tuple[int, int]:
        """The LSP (line, character) of a character offset, clamped to the text."""
        offset = max(0, min(offset, len(self.text)))
        line = bisect.bisect_right(self.starts, offset) - 1
        start = self.starts[line]
        return line, _units(self.text[start:offset], self.encoding)

    def offset(self, line: int, column: int) -> int:
        """The offset of leaklint's 1-based ``line`` and ``column`` (code points), clamped."""
        if line < 1:
            return 0
        if line > len(self.starts):
            return len(self.text)
        return min(self.starts[line - 1] + max(column - 1, 0), self.line_end(line - 1))
