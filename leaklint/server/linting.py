"""Lint what the editor holds: a file's buffer, or a notebook's cells, with the settings the command
line would use for that file.

The buffer is linted, not the file on disk, so findings follow every keystroke. The settings are
those of the config file nearest the document (``leaklint check`` started in the document's
folder finds the same one), read again for every lint: an edit of ``pyproject.toml`` applies at
the next change without restarting the server, and reading a small TOML file costs far less than
linting. ``select``, ``ignore``, ``per-file-ignores``, ``min-confidence`` and the fix settings apply
as they do on the command line; a file under ``exclude`` gets no diagnostics, as with
``--force-exclude`` (an editor names every file it opens, as pre-commit does).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from leaklint.config import ConfigError, Settings, load_settings
from leaklint.engine import STDIN_PATH, lint_text
from leaklint.findings import ErrorKind, FileError, Finding
from leaklint.notebook import Cell, Notebook, Program
from leaklint.rule import Rule


@dataclass(frozen=True)
class CellText:
    """One notebook cell as the client sends it: its document URI, whether it is code, its text."""

    uri: str
    code: bool
    text: str


@dataclass
class Linted:
    """One lint of a document. In a notebook, findings carry their cell's number (1-based, in the
    order of ``cells``) and lines within that cell, as ``leaklint check`` reports an ``.ipynb``."""

    path: str
    text: str
    findings: list[Finding] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
    settings: Settings | None = None
    rules: tuple[type[Rule], ...] = ()
    #: For a notebook: its cells, and the program its code cells make (None: no code to lint).
    cells: tuple[CellText, ...] = ()
    program: Program | None = None


def settings_for(path: str, fallback: Path) -> tuple[Settings, tuple[type[Rule], ...]]:
    """The settings and enabled rules for the document at ``path`` (``-``: not a file: the config
    nearest ``fallback``, the workspace). Raises :class:`ConfigError` for a broken config file."""
    from leaklint.registry import all_rules

    known = all_rules()
    start = Path(os.path.dirname(path)) if path != STDIN_PATH else fallback
    settings = load_settings(cwd=start, known_rules={code: rule.name for code, rule in known.items()})
    return settings, tuple(known[code] for code in sorted(settings.enabled_codes(known)))


def _prepare(path: str, text: str, fallback: Path) -> Linted:
    """A :class:`Linted` with settings and rules, or with the error that stops linting."""
    linted = Linted(path, text)
    try:
        linted.settings, linted.rules = settings_for(path, fallback)
    except ConfigError as error:
        linted.errors.append(FileError(path, ErrorKind.IO, f"configuration error: {error}"))
    return linted


def _excluded(linted: Linted) -> bool:
    return linted.settings is None or (linted.path != STDIN_PATH and linted.settings.is_excluded(linted.path))


def lint_buffer(text: str, path: str, fallback: Path) -> Linted:
    """Lint a Python file's buffer ``text``; ``path`` places it (settings, per-file ignores)."""
    linted = _prepare(path, text, fallback)
    if _excluded(linted) or not linted.rules:
        return linted
    outcome = lint_text(text, path, linted.rules, linted.settings)  # type: ignore[arg-type]
    linted.findings, linted.errors = outcome.findings, outcome.errors
    return linted


def notebook_program(cells: Sequence[CellText]) -> Program:
    """The program the code cells make, as :mod:`leaklint.notebook` builds it for an ``.ipynb``:
    IPython syntax masked, shell and other-language cell magics left out, each cell's lines kept."""
    numbered = tuple(Cell(number, "code" if cell.code else "markdown", cell.text) for number, cell in enumerate(cells, start=1))
    return Notebook(text="", cells=numbered, language=None).program()


def lint_notebook(cells: Sequence[CellText], path: str, fallback: Path) -> Linted:
    """Lint a notebook's cells together (one kernel, one namespace); findings are placed in cells."""
    linted = _prepare(path, "", fallback)
    linted.cells = tuple(cells)
    if _excluded(linted) or not linted.rules:
        return linted
    program = notebook_program(cells)
    linted.program, linted.text = program, program.text
    outcome = lint_text(program.text, path, linted.rules, linted.settings) if program.blocks else None  # type: ignore[arg-type]
    linted.errors = program.errors(path)
    if outcome is not None:
        linted.findings = [program.localize(finding) for finding in outcome.findings]
        linted.errors += [program.localize_error(error) for error in outcome.errors]
    return linted
