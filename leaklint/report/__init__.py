"""Output formats: each module turns a :class:`~leaklint.findings.LintResult` into one string.

Every format module exposes the same pure function::

    def render(result: LintResult, rules: Mapping[str, type[Rule]], options: ReportOptions) -> str

Renderers do no I/O: the CLI decides where the string goes (stdout or ``--output-file``), which keeps
them trivially testable with golden strings. The findings arrive already filtered and sorted by the
engine (path, line, column, code); renderers keep that order so every format is deterministic.

The format modules are imported lazily by :func:`render` so that ``leaklint --help`` and a text run
never pay for building SARIF or JSON machinery they do not use.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Mapping

from leaklint import __version__

if TYPE_CHECKING:
    from leaklint.findings import Finding, LintResult
    from leaklint.rule import Rule

#: The values ``--output-format`` accepts (Ruff's names where Ruff has the format); each names a
#: module in this package, except the two layouts of the text format in :data:`TEXT_LAYOUTS`.
FORMATS = ("text", "full", "concise", "json", "json-lines", "junit", "gitlab", "github", "sarif")
#: ``full``: each finding with its source line and carets, its help and fix (``text
#: --show-source``); ``concise``: one line per finding and the summary.
TEXT_LAYOUTS = ("full", "concise")


def is_text_format(fmt: str) -> bool:
    """``text``, ``full`` or ``concise``: meant for people (hints and summaries go with it)."""
    return fmt == "text" or fmt in TEXT_LAYOUTS


@dataclass(frozen=True)
class ReportOptions:
    """Everything a renderer may need besides the result and the rule metadata."""

    #: ANSI colours (text format only); the CLI turns this on for a terminal.
    color: bool = False
    #: Print the offending source line with carets under each finding (text format only).
    show_source: bool = False
    #: Only the finding lines: no hints, no snippets, no summary (text format only).
    quiet: bool = False
    #: One line per finding, then the summary: no hints, no snippets (the ``concise`` format).
    concise: bool = False
    #: ``path -> decoded source text``, as the engine read it. Used for ``--show-source`` snippets and
    #: for SARIF fingerprints that survive lines being inserted above a finding. A missing path is
    #: fine: renderers fall back silently.
    sources: Mapping[str, str] = field(default_factory=dict)
    #: Reported as the tool version in SARIF.
    tool_version: str = __version__
    #: Absolute directory that relative paths are relative to (the CLI passes the working
    #: directory). SARIF uses it for ``originalUriBaseIds["%SRCROOT%"]``; ``None`` leaves it to the
    #: consumer, as code-scanning uploads do anyway.
    src_root: str | None = None
    #: A baseline was applied (``--baseline``): SARIF marks each result ``new``, and
    #: ``baselined`` holds the findings it hid (SARIF shows them as ``unchanged``, suppressed;
    #: the text summary counts them).
    baseline_applied: bool = False
    baselined: tuple[Finding, ...] = ()


def render(fmt: str, result: LintResult, rules: Mapping[str, type[Rule]], options: ReportOptions) -> str:
    """Render ``result`` in format ``fmt`` (one of :data:`FORMATS`), as text any UTF-8 output
    holds (see :mod:`leaklint.report._paths`)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown output format {fmt!r}; expected one of: {', '.join(FORMATS)}")
    from dataclasses import replace

    from leaklint.report._paths import printable

    if fmt in TEXT_LAYOUTS:
        options = replace(options, show_source=fmt == "full" or options.show_source, concise=fmt == "concise")
        fmt = "text"
    module = importlib.import_module(f"{__name__}.{fmt.replace('-', '_')}")
    text: str = module.render(result, rules, options)
    return printable(text)  # a file name that is not UTF-8 never makes the report unwritable


__all__ = ["FORMATS", "TEXT_LAYOUTS", "ReportOptions", "is_text_format", "render"]
