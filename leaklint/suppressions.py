"""Suppression comments, as Ruff spells them, and which of them suppressed something.

- On a line: ``# noqa``, ``# noqa: LL101``, ``# leaklint: ignore``, ``# leaklint: ignore[LL101]``
  on the reported line, or on the first or last line of the statement holding it.
- A range: ``# leaklint: disable[LL101]`` on its own line up to the matching
  ``# leaklint: enable[LL101]`` (``disable``/``enable`` without codes: every code).
- A file: ``# leaklint: noqa: LL101`` (``# leaklint: noqa``: every code) on its own line anywhere.

Comments are found with :mod:`tokenize`, so a ``#`` inside a string never suppresses anything. The
``noqa`` syntax follows Ruff and flake8, so one comment can silence several tools at once; a
foreign code such as ``E501`` only ever suppresses that code, never leaklint's.

Ranges follow Ruff's range suppressions: a ``disable`` is closed by the first later ``enable`` with
the same codes, in the same order, at the same indentation and within the same block; a
``disable`` without one lasts to the end of its block (the end of the file at module level). An
``enable`` that closes nothing, and a range comment after code or indented unlike the code around
it, is ignored. A finding is inside a range when all its lines are. In a notebook a range never
leaves its cell (its implicit end is the cell's end); a file-level comment in any cell applies to
the whole notebook, as it does in Ruff, which lints a notebook's cells as one source.

:class:`Suppressions` also records which directive suppressed which finding, so that the
``unused-suppression`` rule (``rules/ll901_unused_suppression.py``) can report the ones that
suppressed nothing, with a fix that removes them (:func:`unused_suppression_findings`).
"""

from __future__ import annotations

import bisect
import io
import re
import tokenize
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Collection, Iterable, Iterator, Mapping, Sequence

from leaklint.config import matches_selector

if TYPE_CHECKING:
    from leaklint.config import Settings
    from leaklint.findings import Finding
    from leaklint.rule import Rule

#: The table value meaning "every code" (a bare ``# noqa`` or ``# leaklint: ignore``).
ALL_CODES: frozenset[str] = frozenset({"*"})
#: The rule that reports unused suppressions; the engine runs it after the others.
UNUSED_SUPPRESSION_CODE = "LL901"

_CODE = r"[A-Z]+[0-9]+(?![\w-])"
# "# noqa" optionally followed by ": CODES". Codes are Ruff-style (letters then digits, so prose
# after the list is not read as codes); a colon with no valid code suppresses nothing.
_NOQA = re.compile(
    r"#\s*noqa(?![\w-])(?P<colon>\s*:\s*(?P<codes>{code}(?:[\s,]+{code})*)?)?".format(code=_CODE),
    re.IGNORECASE,
)
# "# leaklint: ignore" optionally followed by "[CODES]"; codes there may be prefixes or ALL.
_LEAKLINT_IGNORE = re.compile(
    r"#\s*leaklint\s*:\s*ignore(?![\w-])(?:\s*\[(?P<codes>[^\]]*)\])?",
    re.IGNORECASE,
)
# "# leaklint: noqa" optionally followed by ": CODES" (the file-level form, own line only).
_FILE_NOQA = re.compile(
    r"#\s*leaklint\s*:\s*noqa(?![\w-])(?P<colon>\s*:\s*(?P<codes>{code}(?:[\s,]+{code})*)?)?".format(code=_CODE),
    re.IGNORECASE,
)
# "# leaklint: disable" / "# leaklint: enable", optionally followed by "[CODES]" (own line only).
_RANGE = re.compile(
    r"#\s*leaklint\s*:\s*(?P<action>disable|enable)(?![\w-])(?:\s*\[(?P<codes>[^\]]*)\])?",
    re.IGNORECASE,
)
# Every directive starts like one of these: a text without them needs no tokenizing.
_ANY_DIRECTIVE = re.compile(r"#\s*(?:noqa|leaklint\s*:)", re.IGNORECASE)
_SELECTOR = re.compile(r"^[A-Z]+[0-9]*$")
_SEPARATORS = re.compile(r"[\s,]+")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def noqa_directive(comment: str) -> re.Match[str] | None:
    """The first ``# noqa`` directive in ``comment``: group ``codes`` is its code list (None when
    it names none), group ``colon`` its colon and what follows (None for a bare ``# noqa``)."""
    return _NOQA.search(comment)


def may_hold_directives(source: str) -> bool:
    """False only when ``source`` holds no suppression comment (a quick look, no tokenizing)."""
    return _ANY_DIRECTIVE.search(source) is not None


def _split_codes(text: str) -> tuple[str, ...]:
    """Uppercased selectors from ``"LL101, ll102 LL2"``, in order; anything else is dropped."""
    codes = (part.upper() for part in _SEPARATORS.split(text.strip()) if part)
    return tuple(dict.fromkeys(code for code in codes if _SELECTOR.match(code)))


@dataclass(frozen=True)
class Directive:
    """One suppression directive in a comment."""

    #: ``noqa``, ``ignore`` (line level), ``file``, ``disable`` or ``enable``.
    kind: str
    line: int
    #: 0-based column of the directive's ``#`` in its line.
    column: int
    #: Offsets in the source: the directive, the comment holding it, the code list (or None).
    start: int
    end: int
    comment_start: int
    comment_end: int
    codes_span: tuple[int, int] | None
    #: Uppercased selectors as written; None for a blanket directive (every code).
    codes: tuple[str, ...] | None
    #: The comment is alone on its line (indentation before it, nothing else).
    own_line: bool

    @property
    def blanket(self) -> bool:
        return self.codes is None or "ALL" in self.codes

    def selectors_for(self, code: str) -> list[str]:
        """The selectors of this directive that cover ``code`` (``*`` for a blanket one)."""
        if self.codes is None:
            return ["*"]
        return [selector for selector in self.codes if matches_selector(code, selector)]


@dataclass(frozen=True)
class Range:
    """A ``disable`` comment, the ``enable`` that closes it (None: implicit end), and the lines covered."""

    disable: Directive
    enable: Directive | None
    first_line: int
    last_line: int


@dataclass
class Suppressions:
    """Every suppression directive of one source, and which selectors of each were used."""

    lines: dict[int, list[Directive]] = field(default_factory=dict)
    files: list[Directive] = field(default_factory=list)
    ranges: list[Range] = field(default_factory=list)
    #: Directive (a range by its ``disable``) -> the selectors that suppressed a finding.
    used: dict[Directive, set[str]] = field(default_factory=dict)

    @classmethod
    def parse(cls, source: str, regions: Sequence[tuple[int, int]] | None = None) -> Suppressions:
        """The directives of ``source``. ``regions`` are the (first, last) line spans a range may
        not leave (a notebook's cells); None: the whole source is one."""
        found = cls()
        if not may_hold_directives(source):
            # Every directive matches in the whole text too (the patterns have no anchors), so a
            # text without any needs no tokenizing: most files with a finding.
            return found
        starts = [0, *(match.end() for match in _LINE_BREAK.finditer(source))]
        comments, logical = _scan(source)
        ranges: list[Directive] = []
        for line, column, text in comments:
            offset = starts[line - 1] + column
            own_line = not source[starts[line - 1] : offset].strip()
            for directive in _directives(line, column, offset, text, own_line):
                if directive.kind in ("noqa", "ignore"):
                    found.lines.setdefault(line, []).append(directive)
                elif not own_line:
                    continue  # like Ruff: file and range comments must be alone on their line
                elif directive.kind == "file":
                    found.files.append(directive)
                else:
                    ranges.append(directive)
        if ranges:
            last = len(starts) if not source.endswith(("\n", "\r")) else len(starts) - 1
            found.ranges = _match_ranges(ranges, logical, regions or [(1, max(last, 1))])
        return found

    def __bool__(self) -> bool:
        return bool(self.lines or self.files or self.ranges)

    def _use(self, directive: Directive, code: str) -> bool:
        selectors = directive.selectors_for(code)
        if selectors:
            self.used.setdefault(directive, set()).update(selectors)
        return bool(selectors)

    def suppress(self, code: str, first: int, last: int, lines: Iterable[int]) -> bool:
        """Whether a finding of ``code`` on lines ``first``..``last`` (a line directive on any of
        ``lines`` counts) is suppressed; marks the directive that suppresses it as used. File
        directives are asked first, then ranges, then line directives (Ruff's order)."""
        if any(self._use(directive, code) for directive in self.files):
            return True
        for span in self.ranges:
            if span.first_line <= first and last <= span.last_line and self._use(span.disable, code):
                return True
        for line in sorted(set(lines)):
            if any(self._use(directive, code) for directive in self.lines.get(line, ())):
                return True
        return False

    def covers(self, code: str, line: int) -> bool:
        """Whether a file or range directive covers ``code`` on ``line`` (marks nothing)."""
        return any(d.selectors_for(code) for d in self.files) or any(
            r.first_line <= line <= r.last_line and r.disable.selectors_for(code) for r in self.ranges
        )


def _scan(source: str) -> tuple[list[tuple[int, int, str]], list[tuple[int, int]]]:
    """(line, column, text) of every real comment, and (line, indentation) of every logical line
    of code. A source that does not tokenize: a regex look (may see a '#' inside a string), and no
    logical lines (the engine only gets here on odd input)."""
    comments: list[tuple[int, int, str]] = []
    logical: list[tuple[int, int]] = []
    try:
        # newline=None: a lone \r ends a line too, as it does for Python (old Mac files).
        tokens = list(tokenize.generate_tokens(io.StringIO(source, newline=None).readline))
    except (tokenize.TokenError, SyntaxError):
        for number, line in enumerate(_LINE_BREAK.split(source), start=1):
            start = line.find("#")
            if start != -1:
                comments.append((number, start, line[start:]))
        return comments, []
    at_start = True
    trivia = (tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING)
    for token in tokens:
        if token.type == tokenize.COMMENT:
            comments.append((token.start[0], token.start[1], token.string))
        if token.type == tokenize.NEWLINE:
            at_start = True
        elif at_start and token.type not in trivia and token.type != tokenize.ENDMARKER:
            logical.append(token.start)
            at_start = False
    return comments, logical


def _directives(line: int, column: int, offset: int, comment: str, own_line: bool) -> Iterator[Directive]:
    """The directives in one comment (``column``/``offset``: where the comment starts)."""
    comment_end = offset + len(comment)

    def make(kind: str, match: re.Match[str], codes: tuple[str, ...] | None) -> Directive:
        span = match.span("codes") if match.group("codes") is not None else None
        return Directive(
            kind, line, column + match.start(), offset + match.start(), offset + match.end(),
            offset, comment_end, (offset + span[0], offset + span[1]) if span else None, codes, own_line,
        )

    # "noqa" and the file form take ": CODES" (a colon naming no valid code suppresses nothing);
    # "ignore", "disable" and "enable" take "[CODES]" (an empty or invalid list: nothing either).
    for pattern, kind, colon in ((_NOQA, "noqa", True), (_FILE_NOQA, "file", True), (_LEAKLINT_IGNORE, "ignore", False), (_RANGE, None, False)):
        for match in pattern.finditer(comment):
            what = kind or match.group("action").lower()
            blanket = match.group("colon") is None if colon else match.group("codes") is None
            if blanket:
                yield make(what, match, None)
            elif codes := _split_codes(match.group("codes") or ""):
                yield make(what, match, codes)


def _match_ranges(comments: Sequence[Directive], logical: Sequence[tuple[int, int]], regions: Sequence[tuple[int, int]]) -> list[Range]:
    """Pair ``disable`` comments with their ``enable`` (see the module docstring)."""
    lines = [line for line, _ in logical]
    region_firsts = [first for first, _ in regions]

    def region_of(line: int) -> tuple[int, int]:
        index = max(bisect.bisect_right(region_firsts, line) - 1, 0)
        return regions[index]

    def indent_before(line: int) -> int:
        index = bisect.bisect_left(lines, line) - 1
        return logical[index][1] if index >= 0 and logical[index][0] >= region_of(line)[0] else 0

    def indent_after(line: int) -> int:
        index = bisect.bisect_right(lines, line)
        return logical[index][1] if index < len(logical) and logical[index][0] <= region_of(line)[1] else 0

    def block_end(comment: Directive) -> int:
        """The last line of the block ``comment`` is in: before the next code indented less."""
        last = region_of(comment.line)[1]
        for line, indent in logical[bisect.bisect_right(lines, comment.line):]:
            if line > last:
                break
            if indent < comment.column:
                return line - 1
        return last

    # Ruff keeps a comment indented like the code around it, or one at a block's edge (where the
    # indentation changes); one indented otherwise is ignored.
    valid = [
        c for c in comments
        if c.column == indent_before(c.line) or indent_before(c.line) != indent_after(c.line)
    ]
    enables = [c for c in valid if c.kind == "enable"]
    taken: set[Directive] = set()
    ranges = []
    for disable in (c for c in valid if c.kind == "disable"):
        end = block_end(disable)
        enable = next(
            (
                e for e in enables
                if e not in taken and disable.line < e.line <= end
                and e.column == disable.column and e.codes == disable.codes
            ),
            None,
        )
        if enable is not None:
            taken.add(enable)
        ranges.append(Range(disable, enable, disable.line, enable.line if enable is not None else end))
    return ranges


def suppression_table(source: str) -> dict[int, frozenset[str]]:
    """Map each 1-based line holding a line-level suppression comment to the codes it suppresses."""
    table: dict[int, frozenset[str]] = {}
    for line, directives in Suppressions.parse(source).lines.items():
        merged = frozenset(code for d in directives for code in (d.codes or ("*",)))
        table[line] = ALL_CODES if "*" in merged else merged
    return table


def _suppresses(codes: frozenset[str], code: str) -> bool:
    return "*" in codes or any(matches_selector(code, selector) for selector in codes)


def is_suppressed(code: str, lines: Iterable[int], table: Mapping[int, frozenset[str]]) -> bool:
    """Whether a suppression comment on any of ``lines`` covers ``code`` (exactly or by prefix)."""
    return any(_suppresses(table[line], code) for line in set(lines) if line in table)


# --- unused suppressions (the unused-suppression rule) ---------------------------------------
_WHAT = {
    "noqa": "`noqa` directive",
    "ignore": "`leaklint: ignore` directive",
    "file": "file-level `leaklint: noqa`",
    "disable": "`leaklint: disable` range",
}


def _checked(selector: str, ran: Collection[str], known: Collection[str]) -> bool:
    """Whether leaklint can tell that ``selector`` went unused: it names rules, and every rule it
    names ran on this file (a foreign code, such as E501, or one of a rule not selected is not ours
    to judge)."""
    return any(matches_selector(code, selector) for code in ran) and all(
        code in ran for code in known if matches_selector(code, selector)
    )


def unused_directives(suppressions: Suppressions, ran: Collection[str], known: Collection[str]) -> list[tuple[Directive, Range | None, tuple[str, ...] | None]]:
    """(directive, its range, unused selectors) of each directive that suppressed nothing it can
    be judged on; unused selectors None: the whole (blanket) directive."""
    found: list[tuple[Directive, Range | None, tuple[str, ...] | None]] = []
    candidates: list[tuple[Directive, Range | None]] = [
        *((d, None) for line in sorted(suppressions.lines) for d in suppressions.lines[line]),
        *((d, None) for d in suppressions.files),
        *((r.disable, r) for r in suppressions.ranges),
    ]
    for directive, span in candidates:
        used = suppressions.used.get(directive, set())
        if directive.blanket:
            # A bare "# noqa" is shared with flake8, Ruff and others, which leaklint cannot see.
            if directive.kind != "noqa" and not used:
                found.append((directive, span, None))
            continue
        assert directive.codes is not None
        if any(matches_selector(UNUSED_SUPPRESSION_CODE, s) for s in directive.codes):
            continue  # it names this rule: never reported (Ruff's RUF100 does the same)
        unused = tuple(s for s in directive.codes if s not in used and _checked(s, ran, known))
        if unused:
            found.append((directive, span, unused))
    return found


def _removal(text: str, starts: Sequence[int], directive: Directive, unused: tuple[str, ...] | None) -> tuple[int, int, str]:
    """The edit that takes ``unused`` codes (None: the whole directive) out of its comment: the
    other codes and the rest of the comment stay; a comment left empty goes, with its line when it
    was alone on it."""
    kept = [c for c in directive.codes or () if unused is not None and c not in unused]
    if kept and directive.codes_span is not None:
        return directive.codes_span[0], directive.codes_span[1], ", ".join(kept)
    before = text[directive.comment_start : directive.start]
    after = text[directive.end : directive.comment_end].strip()
    if before.strip():
        remaining = before.rstrip() + (" " + after if after else "")
    else:
        remaining = after if after.startswith("#") or not after else "# " + after
    if remaining:
        return directive.comment_start, directive.comment_end, remaining
    line_start = starts[directive.line - 1]
    if directive.own_line:
        next_line = starts[directive.line] if directive.line < len(starts) else len(text)
        return line_start, next_line, ""
    code = text[line_start : directive.comment_start]
    return line_start + len(code.rstrip()), directive.comment_end, ""


def unused_suppression_findings(
    text: str, path: str, suppressions: Suppressions, rule: type[Rule], ran: Collection[str], known: Collection[str], settings: Settings
) -> list[Finding]:
    """The ``unused-suppression`` findings of one linted text: call after every finding went
    through :meth:`Suppressions.suppress`. ``ran``: the codes of the rules that ran on the file
    (selected, not ignored for it); ``known``: every code leaklint knows."""
    from leaklint.findings import Applicability, Confidence, Finding, Fix, TextEdit

    if not suppressions:
        return []
    starts = [0, *(match.end() for match in _LINE_BREAK.finditer(text))]

    def position(offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(starts, offset)
        return line, offset - starts[line - 1] + 1

    code = rule.code
    findings = []
    for directive, span, unused in unused_directives(suppressions, ran, known):
        if any(d.selectors_for(code) for d in suppressions.files) or any(
            r is not span and r.first_line <= directive.line <= r.last_line and r.disable.selectors_for(code) for r in suppressions.ranges
        ):
            continue  # this rule is itself suppressed there
        comments = [directive] if span is None or span.enable is None else [directive, span.enable]
        edits = []
        for comment in comments:
            start, end, replacement = _removal(text, starts, comment, unused)
            edits.append(TextEdit(start, end, replacement, *position(start), *position(end)))
        what = _WHAT[directive.kind]
        if unused is None or len(unused) == len(directive.codes or ()):
            title = "remove the unused suppression comment"
        else:
            title = f"remove {', '.join(unused)} from the suppression comment"
        if unused is None:
            message = f"unused blanket {what}: it suppressed nothing"
        else:
            message = f"unused {what} (unused: {', '.join(unused)}): no finding of {'that rule' if len(unused) == 1 else 'those rules'} here"
        applicability = settings.fix_applicability(code, Applicability.SAFE)
        line, column = position(directive.start)
        end_line, end_column = position(directive.end)
        findings.append(
            Finding(
                path=path, line=line, column=column, end_line=end_line, end_column=end_column,
                code=code, name=rule.name, severity=rule.severity, confidence=Confidence.HIGH,
                message=message, help=rule.help, statement_start=line, statement_end=line,
                fix=Fix(title, applicability, tuple(edits)) if applicability is not None else None,
            )
        )
    return findings
