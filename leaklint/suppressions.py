"""Inline suppressions: ``# noqa``, ``# noqa: LL101``, ``# leaklint: ignore[LL101]``.

Comments are found with :mod:`tokenize`, so a ``#`` inside a string never suppresses anything. The
``noqa`` syntax follows Ruff and flake8, so one comment can silence several tools at once; a
foreign code such as ``E501`` only ever suppresses that code, never leaklint's.
"""

from __future__ import annotations

import io
import re
import tokenize
from typing import Iterable, Iterator, Mapping

from leaklint.config import matches_selector

#: The table value meaning "every code" (a bare ``# noqa`` or ``# leaklint: ignore``).
ALL_CODES: frozenset[str] = frozenset({"*"})

# "# noqa" optionally followed by ": CODES". Codes are Ruff-style (letters then digits, so prose
# after the list is not read as codes); a colon with no valid code suppresses nothing.
_NOQA = re.compile(
    r"#\s*noqa(?![\w-])(?P<colon>\s*:\s*(?P<codes>{code}(?:[\s,]+{code})*)?)?".format(
        code=r"[A-Z]+[0-9]+(?![\w-])"
    ),
    re.IGNORECASE,
)
# "# leaklint: ignore" optionally followed by "[CODES]"; codes there may be prefixes or ALL.
_LEAKLINT_IGNORE = re.compile(
    r"#\s*leaklint\s*:\s*ignore(?![\w-])(?:\s*\[(?P<codes>[^\]]*)\])?",
    re.IGNORECASE,
)
_SELECTOR = re.compile(r"^[A-Z]+[0-9]*$")
_SEPARATORS = re.compile(r"[\s,]+")


def _split_codes(text: str) -> frozenset[str]:
    """Uppercased selectors from ``"LL101, ll102 LL2"``; anything else is dropped."""
    codes = (part.upper() for part in _SEPARATORS.split(text.strip()) if part)
    return frozenset(code for code in codes if _SELECTOR.match(code))


def _directive_codes(comment: str) -> frozenset[str]:
    """The codes one comment suppresses: :data:`ALL_CODES` for a blanket directive."""
    found: set[str] = set()
    for match in _NOQA.finditer(comment):
        if match.group("colon") is None:
            return ALL_CODES
        found |= _split_codes(match.group("codes") or "")
    for match in _LEAKLINT_IGNORE.finditer(comment):
        if match.group("codes") is None:
            return ALL_CODES
        found |= _split_codes(match.group("codes"))
    return frozenset(found)


def _comments(source: str) -> Iterator[tuple[int, str]]:
    """(line, text) of every real comment; a regex fallback if the source does not tokenize."""
    try:
        # newline=None: a lone \r ends a line too, as it does for Python (old Mac files).
        tokens = list(tokenize.generate_tokens(io.StringIO(source, newline=None).readline))
    except (tokenize.TokenError, SyntaxError):
        # Best effort: may see a '#' inside a string, but the engine only gets here on odd input.
        for number, line in enumerate(re.split(r"\r\n|\r|\n", source), start=1):  # not at form feeds
            start = line.find("#")
            if start != -1:
                yield number, line[start:]
        return
    for token in tokens:
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string


def suppression_table(source: str) -> dict[int, frozenset[str]]:
    """Map each 1-based line holding a suppression comment to the codes it suppresses."""
    table: dict[int, frozenset[str]] = {}
    if not _NOQA.search(source) and not _LEAKLINT_IGNORE.search(source):
        # Every directive a comment holds also matches in the whole text (the patterns have no
        # anchors), so a text without any needs no tokenizing: most files with a finding.
        return table
    for line, comment in _comments(source):
        codes = _directive_codes(comment)
        if not codes:  # no directive, or one naming no valid code
            continue
        merged = codes | table.get(line, frozenset())
        table[line] = ALL_CODES if "*" in merged else merged
    return table


def _suppresses(codes: frozenset[str], code: str) -> bool:
    return "*" in codes or any(matches_selector(code, selector) for selector in codes)


def is_suppressed(code: str, lines: Iterable[int], table: Mapping[int, frozenset[str]]) -> bool:
    """Whether a suppression comment on any of ``lines`` covers ``code`` (exactly or by prefix)."""
    return any(_suppresses(table[line], code) for line in set(lines) if line in table)
