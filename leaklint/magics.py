"""IPython syntax in a notebook cell, masked so that the cell parses as Python.

Jupyter hands every cell to IPython, whose input transformers turn ``%timeit f(x)``, ``!pip install
torch``, ``obj?`` or ``%%time`` into Python before running it. leaklint does not run IPython: it
replaces each line of IPython syntax by a line that Python ignores, so the rest of the cell parses
and every other line keeps its number and its columns (findings point at what the user wrote).

What is masked, only where a new statement may start (never inside brackets, strings or a
backslash continuation):

* escapes: ``%magic``, ``%%magic`` (past the first line), ``!shell``, ``!!shell``, ``?obj``,
  ``??obj``, ``/f x``, ``,f a b``, ``;f a b``, and every line a trailing ``\\`` continues them onto;
* help: ``obj?``, ``obj.attr??``, ``%magic?``;
* assignments from the shell or a magic: ``files = !ls``, ``out = %sx ls``;
* automagics, a magic's name without ``%`` (``pip install torch``, ``cd data``), only when the line
  is not Python and opens nothing (``time = 3`` and ``config = {`` stay Python);
* ``from __future__ import ...`` in a later cell (IPython accepts it there; a module does not).

A masked line at the top level becomes a comment; an indented one becomes ``pass`` plus a comment,
so a block whose only statement was a magic stays a block. Each mask carries a marker (its cell
and rank), which is how the fixer finds the line again to put the original back.

A cell that starts with a cell magic whose body is not Python run by the kernel (``%%bash``,
``%%writefile``, ``%%html``, ``%%python3``...) is not Python at all: :func:`cell_magic` names it
and the notebook leaves the cell out. ``%%time``, ``%%timeit``, ``%%capture``, ``%%prun`` and
``%%debug`` run their body as Python in the kernel, so only their first line is masked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: Cell magics whose body is Python that the kernel runs in the notebook's namespace.
TRANSPARENT_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug"})

#: IPython's line magics, which run without ``%`` when automagic is on (the default).
AUTOMAGICS = frozenset(
    """
    alias alias_magic autoawait autocall automagic autosave bookmark cat cd clear colors conda config
    connect_info cp dhist dirs doctest_mode ed edit env gui hist history killbgscripts ldir less lf lk
    ll load load_ext loadpy logoff logon logstart logstate logstop ls lsmagic lx macro magic man
    matplotlib mkdir more mv notebook page pastebin pdb pdef pdoc pfile pinfo pinfo2 pip popd pprint
    precision prun psearch psource pushd pwd pycat pylab qtconsole quickref recall rehashx
    reload_ext rep rerun reset reset_selective rm rmdir run save sc set_env store sx system tb time
    timeit unalias unload_ext uv who who_ls whos xdel xmode
    """.split()
)

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")
_CELL_MAGIC = re.compile(r"%%([A-Za-z_][\w.-]*)")
# IPython's own pattern for ``obj?`` / ``%magic??`` (inputtransformer2.HelpEnd).
_HELP_END = re.compile(r"%{0,2}(?!\d)[\w*]+(?:\.(?!\d)[\w*]+|\[-?[0-9]+\])*\?\??")
_ASSIGN_ESCAPE = re.compile(r"(?:[A-Za-z_]\w*\s*,\s*)*[A-Za-z_]\w*\s*=\s*[!%]")
_AUTOMAGIC = re.compile(r"([A-Za-z_]\w*)[ \t]+\S.*")
_FUTURE_IMPORT = re.compile(r"from[ \t]+__future__[ \t]+import\b")
_ESCAPES = "%!?/,;"
_SPACE = " \t\f"
_OPENING, _CLOSING = "([{", ")]}"


@dataclass(frozen=True)
class MaskedLine:
    """One line of IPython syntax and what Python sees in its place."""

    #: 1-based line in the cell.
    line: int
    #: The line as the user wrote it, without its line break.
    original: str
    #: The line Python parses instead, without its line break.
    masked: str
    #: The mask's comment, unique in the cell: how the line is found again after a fix.
    marker: str
    #: The mask's indentation (that of the magic it stands for).
    indent: str


def split_lines(text: str) -> list[str]:
    """The lines of ``text`` with their line breaks (``\\r\\n``, ``\\r`` or ``\\n``, as Python reads them)."""
    return _LINE.findall(text)


def line_body(line: str) -> tuple[str, str]:
    """A line split into its text and its line break."""
    body = line.rstrip("\r\n")
    return body, line[len(body):]


def cell_magic(source: str) -> str | None:
    """The name of the cell magic that ``source`` starts with (``%%time`` -> ``time``), if any.

    IPython drops leading blank lines first, so the magic is the first line with text on it."""
    for line in split_lines(source):
        if line.strip():
            match = _CELL_MAGIC.match(line)
            return match.group(1) if match else None
    return None


def is_python_cell_magic(name: str) -> bool:
    """Whether a cell starting with ``%%name`` holds Python the kernel runs in its namespace."""
    return name in TRANSPARENT_CELL_MAGICS


def marker_for(cell: int, rank: int) -> str:
    """The comment that marks the ``rank``-th masked line of cell ``cell``."""
    return f"# ipython-syntax:{cell}.{rank}"


def mask_ipython(source: str, cell: int, *, mask_future_imports: bool = False) -> tuple[str, tuple[MaskedLine, ...]]:
    """``source`` with every line of IPython syntax masked (see the module docstring), and the
    masked lines. Lines keep their breaks; no line is added or removed."""
    lines = split_lines(source)
    out: list[str] = []
    masked: list[MaskedLine] = []
    state = _Scan()
    continuing: str | None = None  # the indentation of a magic that a trailing backslash continues
    for index, line in enumerate(lines):
        body, newline = line_body(line)
        indent = body[: len(body) - len(body.lstrip(_SPACE))]
        mask_indent: str | None = None
        if continuing is not None:
            mask_indent = continuing
        elif state.at_statement_start():
            if _is_ipython_line(body.strip(_SPACE)) or (mask_future_imports and _is_future_import(body)):
                mask_indent = indent
        if mask_indent is None:
            state.advance(body)
            out.append(line)
            continue
        continuing = mask_indent if body.endswith("\\") else None
        marker = marker_for(cell, len(masked) + 1)
        replacement = f"{mask_indent}pass  {marker}" if mask_indent else marker
        masked.append(MaskedLine(index + 1, body, replacement, marker, mask_indent))
        out.append(replacement + newline)
    return "".join(out), tuple(masked)


def restore_line(fixed_line: str, masked: MaskedLine) -> str | None:
    """The original of a masked line, re-indented as a fix re-indented its mask (``fixed_line``,
    without its line break); None when the fix changed the mask itself."""
    stripped = fixed_line.lstrip(_SPACE)
    new_indent = fixed_line[: len(fixed_line) - len(stripped)]
    if stripped != masked.masked.lstrip(_SPACE):
        return None
    if new_indent == masked.indent:
        return masked.original
    if new_indent.startswith(masked.indent):  # indented further (wrapped in a block)
        return new_indent[len(masked.indent):] + masked.original
    removed = masked.indent[len(new_indent):] if masked.indent.startswith(new_indent) else None
    if removed is not None and masked.original.startswith(removed):  # dedented (a block unwrapped)
        return masked.original[len(removed):]
    return new_indent + masked.original.lstrip(_SPACE)


def _is_ipython_line(text: str) -> bool:
    """Whether a logical line (stripped of indentation) is IPython syntax rather than Python."""
    if not text or text.startswith("#"):
        return False
    if text[0] in _ESCAPES:
        return True
    code = text.rstrip(_SPACE)
    if code.endswith("?") and _HELP_END.fullmatch(code):
        return True
    if _ASSIGN_ESCAPE.match(text):
        return True
    automagic = _AUTOMAGIC.fullmatch(code)
    if automagic and automagic.group(1) in AUTOMAGICS and not _compiles(code):
        # Not Python on its own; but the first line of a statement that goes on (`config = {`)
        # leaves a bracket, a string or a backslash open.
        return _is_whole_line(code)
    return False


def _is_future_import(body: str) -> bool:
    """A one-line ``from __future__ import ...`` (a later cell's, masked: a module allows it only first)."""
    text = body.strip(_SPACE)
    return bool(_FUTURE_IMPORT.match(text)) and _is_whole_line(text)


def _is_whole_line(text: str) -> bool:
    """Whether ``text`` leaves no bracket, string or backslash continuation open."""
    scan = _Scan()
    scan.advance(text)
    return scan.at_statement_start()


def _compiles(text: str) -> bool:
    try:
        compile(text, "<cell line>", "exec", 0x400, dont_inherit=True)  # ast.PyCF_ONLY_AST
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


class _Scan:
    """Just enough of Python's tokenizer to know where a statement may start: open brackets,
    open strings (triple-quoted ones span lines) and backslash continuations."""

    def __init__(self) -> None:
        self.depth = 0
        self.quote: str | None = None  # the open string's closing quote
        self.continued = False

    def at_statement_start(self) -> bool:
        return self.depth == 0 and self.quote is None and not self.continued

    def advance(self, body: str) -> None:
        """Read one physical line (without its line break)."""
        index, length = 0, len(body)
        self.continued = False
        string_continues = False  # a backslash ends the line inside a one-quote string
        while index < length:
            char = body[index]
            if self.quote is not None:
                if char == "\\":
                    string_continues = index == length - 1
                    index += 2
                    continue
                if body.startswith(self.quote, index):
                    index += len(self.quote)
                    self.quote = None
                    continue
                index += 1
                continue
            if char == "#":
                return
            if char in "'\"":
                triple = body[index: index + 3]
                self.quote = triple if triple in ("'''", '"""') else char
                index += len(self.quote)
                continue
            if char in _OPENING:
                self.depth += 1
            elif char in _CLOSING:
                self.depth = max(0, self.depth - 1)
            elif char == "\\" and index == length - 1:
                self.continued = True
            index += 1
        if self.quote is not None and len(self.quote) == 1 and not string_continues:
            self.quote = None  # a one-quote string cannot span lines (a syntax error Python reports)
