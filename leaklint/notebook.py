"""Jupyter notebooks (``.ipynb``): the code cells as one program, findings placed in their cells,
and fixed cells spliced back into the notebook's JSON.

A notebook's kernel runs its code cells in one namespace, so a model defined in cell 1 and a
training loop in cell 3 are one program. :meth:`Notebook.program` concatenates the code cells in
order, each followed by one blank separator line, with IPython syntax masked line for line
(:mod:`leaklint.magics`); the engine lints that text like a Python file. Every program line
belongs to one cell, so :meth:`Program.localize` turns a finding's program lines into cell lines
(columns are unchanged: a cell's lines are copied as they are). Left out: markdown and raw cells,
cells run by something else than the kernel's Python (``%%bash``, ``%%writefile``...), cells whose
IPython syntax is only valid with top-level ``await``, and cells with a syntax error (reported,
the others are still linted). A notebook whose kernel language is not Python is not linted.

Fixes are made on the program text. :meth:`Program.fixed_sources` follows each cell's span
through the edits (an insertion at a cell's first character belongs to that cell, one just past
its last line break too: the separator line keeps them apart), puts the masked IPython lines
back, and :meth:`Notebook.with_sources` replaces only the ``source`` values of changed cells in
the original JSON text; outputs, metadata, execution counts, key order and indentation elsewhere
stay byte for byte. In a changed list-of-lines source, the lines that did not change keep their
original JSON spelling too.
"""

from __future__ import annotations

import ast
import bisect
import json
import re
from dataclasses import dataclass, replace
from typing import Mapping, Sequence

from leaklint.findings import ErrorKind, FileError, Finding, Fix, TextEdit
from leaklint.fixes.apply import line_starts
from leaklint.magics import MaskedLine, cell_magic, is_python_cell_magic, line_body, mask_ipython, restore_line, split_lines

#: The blank line between two cells in the program.
SEPARATOR = "\n"
_TOP_LEVEL_AWAIT = getattr(ast, "PyCF_ALLOW_TOP_LEVEL_AWAIT", 0x2000)
_PROGRAM_POSITION = re.compile(r"\bat (\d+):(\d+)")
#: A program line a finding's message or help names (``the forward at line 29``).
_MESSAGE_LINE = re.compile(r"\bline (\d+)\b(?: of the module)?")
#: What a message quotes from the user's code, between single quotes.
_QUOTED = re.compile(r"('[^']*')")
_JSON_SPACE = re.compile(r"[ \t\n\r]*")
_NON_ASCII_ESCAPE = re.compile(r"\\u(?!00[0-7])[0-9a-fA-F]{4}")
_NOTEBOOK_LINE = re.compile(r"[^\n]*\n|[^\n]+")
_DECODER = json.JSONDecoder()


class NotebookError(Exception):
    """The text is not a notebook leaklint can read, or a fix cannot be put back into it."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Cell:
    """One cell of the notebook."""

    #: 1-based, every cell counted (markdown too), as Ruff and the notebook's own order number them.
    number: int
    #: ``code``, ``markdown`` or ``raw``.
    kind: str
    #: The source, joined when the file stores it as a list of lines.
    source: str


@dataclass(frozen=True)
class Notebook:
    """A parsed nbformat-4 notebook and the text it was parsed from."""

    text: str
    cells: tuple[Cell, ...]
    #: ``metadata.language_info.name`` (or the kernelspec's language), lower-cased; None if unsaid.
    language: str | None

    @classmethod
    def parse(cls, text: str) -> Notebook:
        """Read a notebook's JSON; :class:`NotebookError` says what makes it unreadable."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise NotebookError(f"not valid JSON: {error.msg} at line {error.lineno}, column {error.colno}") from None
        except RecursionError:
            raise NotebookError("not valid JSON: nested too deeply") from None
        if not isinstance(data, dict):
            raise NotebookError(f"not a Jupyter notebook: the top level is {_json_kind(data)}, not an object")
        if "nbformat" not in data:
            raise NotebookError("not a Jupyter notebook: no 'nbformat' version")
        version = data["nbformat"]
        if version != 4 or isinstance(version, bool):
            raise NotebookError(
                f"nbformat {json.dumps(version)} is not supported: leaklint reads nbformat 4 notebooks "
                "(convert with 'jupyter nbconvert --to notebook --inplace')"
            )
        cells = data.get("cells")
        if not isinstance(cells, list):
            what = "missing" if "cells" not in data else f"{_json_kind(cells)}, not a list"
            raise NotebookError(f"not a valid notebook: 'cells' is {what}")
        return cls(text, tuple(_cell(number, cell) for number, cell in enumerate(cells, start=1)), _language(data.get("metadata")))

    @property
    def is_python(self) -> bool:
        return self.language is None or "python" in self.language

    def cell(self, number: int) -> Cell | None:
        return self.cells[number - 1] if 1 <= number <= len(self.cells) else None

    def program(self) -> Program:
        """The code cells as one program (see the module docstring)."""
        pieces: list[str] = []
        blocks: list[CellBlock] = []
        problems: list[tuple[ErrorKind, str]] = []
        offset, line = 0, 1
        for cell in self.cells:
            if cell.kind != "code" or not self.is_python or not cell.source.strip():
                continue
            magic = cell_magic(cell.source)
            if magic is not None and not is_python_cell_magic(magic):
                continue
            masked_source, masked = mask_ipython(cell.source, cell.number, mask_future_imports=bool(blocks))
            problem = _parse_problem(masked_source, cell.number)
            if problem is not None:
                if not _valid_with_top_level_await(masked_source):
                    problems.append(problem)
                continue
            added_newline = not masked_source.endswith("\n")  # (a lone \r would join the separator)
            text = masked_source + "\n" if added_newline else masked_source
            count = len(split_lines(text))
            blocks.append(CellBlock(cell, offset, offset + len(text), line, count, text, masked, added_newline))
            pieces.append(text + SEPARATOR)
            offset += len(text) + len(SEPARATOR)
            line += count + 1
        return Program("".join(pieces), tuple(blocks), tuple(problems))

    def with_sources(self, sources: Mapping[int, str]) -> str:
        """The notebook's text with the sources of cells ``sources`` names (number -> new source)
        replaced, and nothing else changed; verified by reading the result back."""
        if not sources:
            return self.text
        values = _source_values(self.text)
        style = _Style.of(self.text)
        pieces: list[str] = []
        cursor = 0
        for number in sorted(sources):
            value = values[number - 1]
            token = _encode_source(sources[number], value, self.text, style)
            pieces += [self.text[cursor:value.start], token]
            cursor = value.end
        pieces.append(self.text[cursor:])
        new_text = "".join(pieces)
        try:
            written = Notebook.parse(new_text)
        except NotebookError as error:
            raise NotebookError(f"the fixed notebook would not be valid ({error.reason})") from None
        wanted = [sources.get(cell.number, cell.source) for cell in self.cells]
        if [cell.source for cell in written.cells] != wanted:
            raise NotebookError("the fixed notebook would not hold the fixed cells")
        return new_text


@dataclass(frozen=True)
class CellBlock:
    """Where one code cell is in the program."""

    cell: Cell
    #: Offset of the cell's first character in the program.
    start: int
    #: Offset just past its last line break: the separator line starts there.
    end: int
    #: The program line of the cell's line 1.
    first_line: int
    line_count: int
    #: The cell as the program holds it (IPython syntax masked, ending with a line break).
    text: str
    masked: tuple[MaskedLine, ...]
    #: The cell's source does not end with a line break (Jupyter's usual way); the program adds one.
    added_newline: bool

    def line_in_cell(self, program_line: int) -> int:
        """A program line as a line of this cell (the separator after it counts as one past its end)."""
        return min(max(program_line - self.first_line + 1, 1), self.line_count + 1)

    def offset_in_source(self, line: int, column: int) -> int:
        """The offset in the cell's source of 1-based ``line`` and ``column`` (clamped to the source)."""
        source = self.cell.source
        starts = line_starts(source)
        if line > len(starts):
            return len(source)
        return min(starts[line - 1] + column - 1, len(source))

    def unmasked(self, fixed: str) -> str:
        """The cell's source from its fixed program text: the masked lines put back, the added
        line break taken off again."""
        lines = split_lines(fixed)
        for masked in self.masked:
            found = [index for index, line in enumerate(lines) if line_body(line)[0].endswith(masked.marker)]
            if len(found) != 1:
                raise NotebookError(f"a fix removed or copied IPython syntax in cell {self.cell.number}")
            body, newline = line_body(lines[found[0]])
            restored = restore_line(body, masked)
            if restored is None:
                raise NotebookError(f"a fix changed IPython syntax in cell {self.cell.number}")
            lines[found[0]] = restored + newline
        source = "".join(lines)
        if self.added_newline and source.endswith("\n"):
            source = source[:-1]
        return source


@dataclass(frozen=True)
class Program:
    """The program a notebook's code cells make, and the way back to the cells."""

    text: str
    blocks: tuple[CellBlock, ...]
    #: Cells left out for an error (a syntax error...): (kind, reason naming the cell).
    problems: tuple[tuple[ErrorKind, str], ...]

    def errors(self, path: str) -> list[FileError]:
        return [FileError(path, kind, reason) for kind, reason in self.problems]

    def block_at(self, line: int) -> CellBlock:
        """The cell that program line ``line`` is in (a separator line: the cell before it)."""
        index = bisect.bisect_right([block.first_line for block in self.blocks], line) - 1
        return self.blocks[max(index, 0)]

    def localize(self, finding: Finding) -> Finding:
        """``finding`` with its cell, and its lines (and its fix's) counted within that cell."""
        block = self.block_at(finding.line)
        fix = finding.fix
        if fix is not None:
            fix = Fix(fix.title, fix.applicability, tuple(self._localize_edit(edit) for edit in fix.edits))
        return replace(
            finding,
            message=self._localize_text(finding.message, block),
            help=self._localize_text(finding.help, block),
            cell=block.cell.number,
            line=block.line_in_cell(finding.line),
            end_line=block.line_in_cell(finding.end_line),
            statement_start=block.line_in_cell(finding.statement_start) if finding.statement_start else 0,
            statement_end=block.line_in_cell(finding.statement_end) if finding.statement_end else 0,
            fix=fix,
        )

    def _localize_text(self, text: str, home: CellBlock) -> str:
        """A message's program lines (``the loop at line 92``) as lines of their cells: ``line 4``
        in the finding's own cell, ``line 4 of cell 7`` in another."""

        def cell_line(match: re.Match[str]) -> str:
            line = int(match.group(1))
            block = self.block_at(line)
            where = "" if block is home else f" of cell {block.cell.number}"
            return f"line {block.line_in_cell(line)}{where}"

        if not self.blocks:
            return text
        # not inside the code a message quotes ('model(batch["line 2"])')
        parts = _QUOTED.split(text)
        return "".join(part if index % 2 else _MESSAGE_LINE.sub(cell_line, part) for index, part in enumerate(parts))

    def _localize_edit(self, edit: TextEdit) -> TextEdit:
        """A program edit as an edit of its cell's source: what applying it to the cell gives is
        what ``--fix`` writes (an insertion past a cell's last line, where the program added a
        line break, becomes a line break and the text after the cell's last character)."""
        index = bisect.bisect_right([block.start for block in self.blocks], edit.start) - 1
        block = self.blocks[max(index, 0)]
        source_end = len(block.text) - 1 if block.added_newline else len(block.text)
        start = edit.start - block.start
        end = min(edit.end - block.start, len(block.text))
        replacement = edit.replacement
        if end > source_end:  # the edit reaches the line break the program added: see unmasked()
            after = block.text[:start] + replacement + block.text[end:]
            written = after[:-1] if after.endswith("\n") else after
            start = min(start, source_end, len(written))
            replacement, end = written[start:], source_end
        starts = line_starts(block.text)
        (line, column), (end_line, end_column) = _line_column(starts, start), _line_column(starts, end)
        return TextEdit(
            block.offset_in_source(line, column),
            block.offset_in_source(end_line, end_column),
            replacement,
            line,
            column,
            end_line,
            end_column,
            cell=block.cell.number,
        )

    def localize_error(self, error: FileError) -> FileError:
        """An error whose reason names a program position (``at 12:5``) names the cell's instead."""
        if not self.blocks:
            return error

        def cell_position(match: re.Match[str]) -> str:
            line = int(match.group(1))
            block = self.block_at(line)
            return f"at cell {block.cell.number}:{block.line_in_cell(line)}:{match.group(2)}"

        return replace(error, reason=_PROGRAM_POSITION.sub(cell_position, error.reason))

    def fixed_sources(self, fixed: str, passes: Sequence[Sequence[TextEdit]]) -> dict[int, str]:
        """The new source of every cell that the fix passes (each pass's edits in the coordinates
        of the text it was applied to) changed, by cell number; :class:`NotebookError` when an edit
        crosses from one cell into another or changes masked IPython syntax."""
        spans = [(block.start, block.end) for block in self.blocks]
        for edits in passes:
            spans = [(_start_after(start, edits), _end_after(end, edits)) for start, end in spans]
        sources: dict[int, str] = {}
        for block, (start, end) in zip(self.blocks, spans):
            if fixed[end : end + len(SEPARATOR)] != SEPARATOR:
                raise NotebookError(f"a fix ran past the end of cell {block.cell.number}")
            text = fixed[start:end]
            if text == block.text:
                continue
            source = block.unmasked(text)
            if source != block.cell.source:
                sources[block.cell.number] = source
        return sources


def _line_column(starts: Sequence[int], offset: int) -> tuple[int, int]:
    """1-based line and column of ``offset`` in a text whose lines start at ``starts``."""
    line = bisect.bisect_right(starts, offset)
    return line, offset - starts[line - 1] + 1


def cell_diff(path: str, number: int, before: str, after: str) -> str:
    """A unified diff of one cell's source, its files named ``path:cell N`` (as Ruff names them)."""
    from leaklint.fixes.apply import unified_diff

    if not before.endswith("\n") and not after.endswith("\n"):
        before, after = before + "\n", after + "\n"  # cells rarely end with a line break: not news
    return unified_diff(f"{path}:cell {number}", before, after)


# --- reading ---------------------------------------------------------------------------------------
def _json_kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object"


def _cell(number: int, data: object) -> Cell:
    if not isinstance(data, dict):
        raise NotebookError(f"not a valid notebook: cell {number} is {_json_kind(data)}, not an object")
    kind = data.get("cell_type")
    if not isinstance(kind, str):
        raise NotebookError(f"not a valid notebook: cell {number} has no 'cell_type'")
    source = data.get("source")
    if isinstance(source, str):
        return Cell(number, kind, source)
    if isinstance(source, list) and all(isinstance(part, str) for part in source):
        return Cell(number, kind, "".join(source))
    what = "missing" if "source" not in data else f"{_json_kind(source)}, not a string or a list of strings"
    raise NotebookError(f"not a valid notebook: the source of cell {number} is {what}")


def _language(metadata: object) -> str | None:
    if not isinstance(metadata, dict):
        return None
    info, kernel = metadata.get("language_info"), metadata.get("kernelspec")
    for value in (info.get("name") if isinstance(info, dict) else None, kernel.get("language") if isinstance(kernel, dict) else None):
        if isinstance(value, str) and value.strip():
            return value.strip().lower()
    return None


def _parse_problem(source: str, number: int) -> tuple[ErrorKind, str] | None:
    """Why a cell (IPython syntax masked) does not parse as a module, or None."""
    try:
        compile(source, f"<cell {number}>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as error:
        where = f"at cell {number}:{error.lineno}:{error.offset}" if error.lineno else f"in cell {number}"
        return ErrorKind.SYNTAX, f"syntax error {where}: {error.msg}"
    except (RecursionError, MemoryError):
        return ErrorKind.TOO_COMPLEX, f"cell {number} is too deeply nested to parse"
    except ValueError as error:
        return ErrorKind.DECODE, f"cell {number}: {error}"
    return None


def _valid_with_top_level_await(source: str) -> bool:
    """Whether IPython's top-level ``await`` (``await fetch()`` outside a function) is all that
    keeps the cell from parsing: valid in a notebook, but not a module leaklint can analyse."""
    try:
        compile(source, "<cell>", "exec", ast.PyCF_ONLY_AST | _TOP_LEVEL_AWAIT, dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


# --- following cells through the fixes ------------------------------------------------------------
def _start_after(offset: int, edits: Sequence[TextEdit]) -> int:
    """Where a cell that starts at ``offset`` starts after ``edits`` (an insertion there is the cell's)."""
    shift = 0
    for edit in edits:
        if edit.start < offset < edit.end:
            raise NotebookError("a fix spans two cells")
        if edit.end <= offset and not edit.start == edit.end == offset:
            shift += len(edit.replacement) - (edit.end - edit.start)
    return offset + shift


def _end_after(offset: int, edits: Sequence[TextEdit]) -> int:
    """Where a cell that ends at ``offset`` ends after ``edits`` (an insertion there is the cell's)."""
    shift = 0
    for edit in edits:
        if edit.start < offset < edit.end:
            raise NotebookError("a fix spans two cells")
        if edit.end <= offset:
            shift += len(edit.replacement) - (edit.end - edit.start)
    return offset + shift


# --- writing: only the changed sources, in the file's own style -----------------------------------
@dataclass(frozen=True)
class _SourceValue:
    """Where a cell's ``source`` value is in the notebook's text."""

    start: int
    end: int
    #: The spans of a list's items (None for a string value).
    items: tuple[tuple[int, int], ...] | None


@dataclass(frozen=True)
class _Style:
    """How the notebook's JSON was written, for new text to match it."""

    ensure_ascii: bool
    #: Between list items on one line: ", " (json's default) or "," (compact).
    item_separator: str

    @classmethod
    def of(cls, text: str) -> _Style:
        if not text.isascii():
            ensure_ascii = False  # nbformat writes ensure_ascii=False
        else:
            ensure_ascii = _NON_ASCII_ESCAPE.search(text) is not None
        return cls(ensure_ascii, ", " if '": ' in text else ",")


def _skip_space(text: str, index: int) -> int:
    return _JSON_SPACE.match(text, index).end()  # type: ignore[union-attr]


def _members(text: str, index: int) -> list[tuple[str, int, int]]:
    """(key, value start, value end) of the JSON object at ``index`` (valid JSON, already read)."""
    members: list[tuple[str, int, int]] = []
    index = _skip_space(text, index + 1)
    if text[index] == "}":
        return members
    while True:
        key, index = _DECODER.raw_decode(text, index)
        index = _skip_space(text, _skip_space(text, index) + 1)  # past ':'
        _, end = _DECODER.raw_decode(text, index)
        members.append((key, index, end))
        index = _skip_space(text, end)
        if text[index] != ",":
            return members
        index = _skip_space(text, index + 1)


def _elements(text: str, index: int) -> list[tuple[int, int]]:
    """(start, end) of each element of the JSON array at ``index``."""
    elements: list[tuple[int, int]] = []
    index = _skip_space(text, index + 1)
    if text[index] == "]":
        return elements
    while True:
        _, end = _DECODER.raw_decode(text, index)
        elements.append((index, end))
        index = _skip_space(text, end)
        if text[index] != ",":
            return elements
        index = _skip_space(text, index + 1)


def _last(members: list[tuple[str, int, int]], key: str) -> tuple[int, int]:
    """The span of ``key``'s value (the last one when repeated, as ``json.loads`` keeps it)."""
    return [(start, end) for name, start, end in members if name == key][-1]


def _source_values(text: str) -> list[_SourceValue]:
    """Where each cell's ``source`` value is in a notebook's text (read with :meth:`Notebook.parse`)."""
    top = _skip_space(text, 0)
    cells_start, _ = _last(_members(text, top), "cells")
    values = []
    for cell_start, _ in _elements(text, cells_start):
        start, end = _last(_members(text, cell_start), "source")
        items = tuple(_elements(text, start)) if text[start] == "[" else None
        values.append(_SourceValue(start, end, items))
    return values


# --- where a cell's characters are in the notebook's file ----------------------------------------
class FilePositions:
    """Where the characters of a notebook's cells are in the notebook's own text (the ``.ipynb``
    file's JSON), for the formats that address the file by line and column: GitHub annotations and
    SARIF regions and replacements. A cell's line 7 is not the file's line 7; the file's line is the
    one holding that code, inside a ``source`` string, and a column counts the JSON spelling of the
    characters before it (an escaped ``\\"`` is two)."""

    def __init__(self, notebook: Notebook) -> None:
        self._notebook = notebook
        self._values = _source_values(notebook.text)
        self._line_starts = line_starts(notebook.text)
        self._offsets: dict[int, list[int] | None] = {}
        self._style = _Style.of(notebook.text)

    def offset(self, cell: int, line: int, column: int) -> int | None:
        """The offset in the file's text of ``line``:``column`` (1-based) of cell ``cell``: of the
        character there, or of the closing quote after the cell's last character; None when the
        cell is unknown or its source cannot be followed."""
        found = self._notebook.cell(cell)
        offsets = self._cell_offsets(cell) if found is not None else None
        if found is None or offsets is None:
            return None
        starts = line_starts(found.source)
        if line > len(starts):
            index = len(found.source)
        else:
            index = min(starts[max(line, 1) - 1] + max(column, 1) - 1, len(found.source))
        return offsets[index]

    def position(self, cell: int, line: int, column: int) -> tuple[int, int] | None:
        """:meth:`offset` as the file's (line, column), both 1-based, columns in code points."""
        offset = self.offset(cell, line, column)
        if offset is None:
            return None
        line_index = bisect.bisect_right(self._line_starts, offset) - 1
        return line_index + 1, offset - self._line_starts[line_index] + 1

    def escaped(self, text: str) -> str:
        """``text`` as it is spelt inside a JSON string of this file (its own ``ensure_ascii``)."""
        return json.dumps(text, ensure_ascii=self._style.ensure_ascii)[1:-1]

    def _cell_offsets(self, cell: int) -> list[int] | None:
        """For each character of the cell's source, its offset in the file; then one more entry,
        the closing quote of the last string. None if the JSON does not decode to the source."""
        if cell not in self._offsets:
            self._offsets[cell] = self._follow(cell)
        return self._offsets[cell]

    def _follow(self, cell: int) -> list[int] | None:
        if not 1 <= cell <= len(self._values):
            return None
        value = self._values[cell - 1]
        tokens = value.items if value.items is not None else ((value.start, value.end),)
        if not tokens:
            return None
        text = self._notebook.text
        offsets: list[int] = []
        for start, end in tokens:
            offsets += _decoded_offsets(text, start, end)
        offsets.append(tokens[-1][1] - 1)
        source = self._notebook.cells[cell - 1].source
        return offsets if len(offsets) == len(source) + 1 else None


def _decoded_offsets(text: str, start: int, end: int) -> list[int]:
    """The offset in ``text`` of each character that the JSON string ``text[start:end]`` decodes to
    (an escape is one character; so is an escaped surrogate pair, as :mod:`json` decodes it)."""
    offsets: list[int] = []
    index, stop = start + 1, end - 1
    while index < stop:
        offsets.append(index)
        if text[index] != "\\":
            index += 1
        elif text[index + 1] != "u":
            index += 2
        elif 0xD800 <= int(text[index + 2 : index + 6], 16) < 0xDC00 and _low_surrogate_at(text, index + 6):
            index += 12
        else:
            index += 6
    return offsets


def _low_surrogate_at(text: str, index: int) -> bool:
    if not text.startswith("\\u", index):
        return False
    try:
        return 0xDC00 <= int(text[index + 2 : index + 6], 16) < 0xE000
    except ValueError:
        return False


def notebook_lines(source: str) -> list[str]:
    """A source as nbformat stores it: one string per line, each but the last ending in ``\\n``."""
    return _NOTEBOOK_LINE.findall(source)


def _encode_source(source: str, value: _SourceValue, text: str, style: _Style) -> str:
    """The JSON for a cell's new source, in the form and layout of the value it replaces."""
    if value.items is None:
        return json.dumps(source, ensure_ascii=style.ensure_ascii)
    old_tokens = [text[start:end] for start, end in value.items]
    old_lines = [json.loads(token) for token in old_tokens]
    new_lines = notebook_lines(source)
    import difflib  # only when a notebook is fixed
    tokens: list[str] = []
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, old_from, old_to, new_from, new_to in matcher.get_opcodes():
        if tag == "equal":
            tokens += old_tokens[old_from:old_to]  # unchanged lines keep their exact spelling
        else:
            tokens += [json.dumps(line, ensure_ascii=style.ensure_ascii) for line in new_lines[new_from:new_to]]
    if not tokens:
        return "[]"
    opening, separator, closing = _list_layout(value, text, style)
    return "[" + opening + separator.join(tokens) + closing + "]"


def _list_layout(value: _SourceValue, text: str, style: _Style) -> tuple[str, str, str]:
    """What goes after ``[``, between items and before ``]``, copied from the value replaced (an
    empty source is never linted, so never fixed: the list has an item)."""
    items = value.items or ()
    if not items:
        return "", style.item_separator, ""
    opening = text[value.start + 1 : items[0][0]]
    closing = text[items[-1][1] : value.end - 1]
    if len(items) > 1:
        separator = text[items[0][1] : items[1][0]]
    else:
        separator = "," + opening if "\n" in opening else style.item_separator
    return opening, separator, closing
