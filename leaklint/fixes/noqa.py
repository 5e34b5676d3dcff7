"""The "suppress on this line" edit (the editor's code action, ``--add-noqa``): a ``# noqa: LLxxx`` comment that :mod:`leaklint.suppressions`
reads back as suppressing the finding.

An existing ``# noqa: E501`` on the line gains the code (``# noqa: E501, LL101``), so one comment
keeps silencing every tool it did; any other comment (``# type: ignore``) stays and the directive
follows it, where the suppression reader finds it too. The edit is checked before it is offered:
the new text must suppress the code on that line and compile whenever the old text did. The
finding's own line comes first, then the last and first lines of its statement (a comment cannot
go at the end of a line inside a triple-quoted string); the first that passes is used.
"""

from __future__ import annotations

import io
import tokenize
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable

from leaklint.fixes.apply import line_starts
from leaklint.suppressions import is_suppressed, noqa_directive, suppression_table

if TYPE_CHECKING:
    from leaklint.findings import Finding



@dataclass(frozen=True)
class Insertion:
    """Replace ``[start, end)`` of the text with ``replacement``, on 1-based ``line``."""

    start: int
    end: int
    replacement: str
    line: int

    def apply(self, text: str) -> str:
        return text[: self.start] + self.replacement + text[self.end :]


def _comment_on(text: str, line: int, start: int, end: int) -> tuple[int, str] | None:
    """(offset, text) of the comment that ends ``line`` (whose content is ``text[start:end]``)."""
    try:
        for token in tokenize.generate_tokens(io.StringIO(text[start:end] + "\n").readline):
            if token.type == tokenize.COMMENT:
                return start + token.start[1], token.string
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass  # a line that does not tokenize alone (inside a bracket): fall back to the last '#'
    at = text.rfind("#", start, end)
    return (at, text[at:end]) if at != -1 else None


def _edit_for_line(text: str, line: int, code: str) -> Insertion:
    starts = line_starts(text)
    start = starts[line - 1]
    end = starts[line] if line < len(starts) else len(text)
    while end > start and text[end - 1] in "\r\n":
        end -= 1
    comment = _comment_on(text, line, start, end)
    if comment is not None:
        at, body = comment
        directive = noqa_directive(body)
        if directive is not None and directive.group("codes") is not None:
            # ``# noqa: E501``: the list to extend.
            position = at + directive.end("codes")
            return Insertion(position, position, f", {code}", line)
        if directive is not None and directive.group("colon") is not None:
            # ``# noqa:`` naming no valid code suppresses nothing, so it becomes ours.
            colon = body.index(":", directive.start("colon")) + 1
            return Insertion(at + directive.start(), at + colon, f"# noqa: {code}", line)
    content_end = end
    while content_end > start and text[content_end - 1] in " \t":
        content_end -= 1
    return Insertion(content_end, end, f"  # noqa: {code}", line)


def _compiles(text: str) -> bool:
    try:
        compile(text, "<noqa>", "exec", dont_inherit=True, flags=0x400)  # ast.PyCF_ONLY_AST
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def suppression_edit(text: str, code: str, lines: Iterable[int]) -> Insertion | None:
    """The edit that suppresses ``code`` on the first of ``lines`` (1-based) where a comment can go
    and is read back as suppressing it; None when no line works."""
    compiled = None
    count = len(line_starts(text))
    for line in dict.fromkeys(lines):
        if not 1 <= line <= count:
            continue
        edit = _edit_for_line(text, line, code)
        after = edit.apply(text)
        if not is_suppressed(code, {line}, suppression_table(after)):
            continue
        if compiled is None:
            compiled = _compiles(text)
        if compiled and not _compiles(after):
            continue
        return edit
    return None


def add_noqa(text: str, findings: Iterable[Finding]) -> tuple[str, int]:
    """``text`` with a ``# noqa`` for every finding not yet suppressed (``--add-noqa``), and how
    many codes were added; a finding where no comment can go is left as it is."""
    added = 0
    for finding in findings:
        lines = [finding.line, finding.statement_end or finding.line, finding.statement_start or finding.line]
        if any(is_suppressed(finding.code, {line}, suppression_table(text)) for line in lines):
            continue  # an earlier finding's comment already covers it
        edit = suppression_edit(text, finding.code, lines)
        if edit is not None:
            text = edit.apply(text)
            added += 1
    return text, added
