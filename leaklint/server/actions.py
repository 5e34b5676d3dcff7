"""Code actions: a finding's own fix, "suppress on this line", and "fix all safe" (``source.fixAll``).

A finding's fix is offered as a quick fix whose title says whether it is safe or unsafe (unsafe
fixes change behaviour on purpose, as ``--unsafe-fixes`` warns); display-only fixes are never
offered as edits, as ``--fix`` never applies them. "Fix all" runs what ``leaklint check --fix`` runs
(every safe fix, re-linting between passes, fixes that would break the file refused) on the
buffer, and replaces the document (or each changed notebook cell) with the result.
"""

from __future__ import annotations

from typing import Sequence

from lsprotocol import types

from leaklint.findings import Applicability, Finding
from leaklint.server.diagnostics import SOURCE, finding_diagnostic, finding_range, lsp_range
from leaklint.fixes.noqa import suppression_edit
from leaklint.server.positions import LineIndex
from leaklint.server.snapshot import Snapshot

FIX_ALL_KIND = f"{types.CodeActionKind.SourceFixAll.value}.{SOURCE}"
KINDS = [types.CodeActionKind.QuickFix, types.CodeActionKind.SourceFixAll, FIX_ALL_KIND]


def _wanted(kind: str, only: Sequence[str] | None) -> bool:
    """Whether the client asked for actions of ``kind`` (``only`` lists kinds or their prefixes)."""
    return not only or any(kind == asked or kind.startswith(f"{asked}.") for asked in only)


def _overlaps(a: types.Range, b: types.Range) -> bool:
    start_a, end_a = (a.start.line, a.start.character), (a.end.line, a.end.character)
    start_b, end_b = (b.start.line, b.start.character), (b.end.line, b.end.character)
    return start_a <= end_b and start_b <= end_a


def code_actions(snapshot: Snapshot, uri: str, params: types.CodeActionParams) -> list[types.CodeAction]:
    """The actions for the findings in ``params.range`` of ``uri``, and "fix all safe"."""
    only = params.context.only
    actions: list[types.CodeAction] = []
    target = snapshot.target(snapshot.cell_number(uri))
    if target is None:
        return actions
    _, text, index = target
    if _wanted(types.CodeActionKind.QuickFix, only):
        for finding in snapshot.findings_for(uri):
            if not _overlaps(finding_range(index, finding), params.range):
                continue
            diagnostic = finding_diagnostic(index, finding)
            fix = fix_action(snapshot, finding, diagnostic)
            if fix is not None:
                actions.append(fix)
            suppress = suppress_action(uri, text, finding, diagnostic, index)
            if suppress is not None:
                actions.append(suppress)
    if _wanted(FIX_ALL_KIND, only):
        fix_all = fix_all_action(snapshot)
        if fix_all is not None:
            actions.append(fix_all)
    return actions


def fix_action(snapshot: Snapshot, finding: Finding, diagnostic: types.Diagnostic) -> types.CodeAction | None:
    """The finding's own fix as a quick fix (None for none, or a display-only one)."""
    fix = finding.fix
    if fix is None or not fix.edits or fix.applicability is Applicability.DISPLAY_ONLY:
        return None
    changes: dict[str, list[types.TextEdit]] = {}
    for edit in fix.edits:
        target = snapshot.target(edit.cell if edit.cell is not None else finding.cell)
        if target is None:
            return None
        uri, _, index = target
        changes.setdefault(uri, []).append(types.TextEdit(range=lsp_range(index, edit.start, edit.end), new_text=edit.replacement))
    return types.CodeAction(
        title=f"{finding.code}: {fix.title} ({fix.applicability} fix)",
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[diagnostic],
        is_preferred=fix.applicability is Applicability.SAFE,
        edit=types.WorkspaceEdit(changes=changes),
    )


def suppress_action(uri: str, text: str, finding: Finding, diagnostic: types.Diagnostic, index: LineIndex) -> types.CodeAction | None:
    """Add ``# noqa: CODE`` on the finding's line (or its statement's last or first line)."""
    lines = [finding.line, finding.statement_end or finding.line, finding.statement_start or finding.line]
    edit = suppression_edit(text, finding.code, lines)
    if edit is None:
        return None
    return types.CodeAction(
        title=f"{finding.code}: suppress on line {edit.line} (# noqa: {finding.code})",
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[diagnostic],
        edit=types.WorkspaceEdit(changes={uri: [types.TextEdit(range=lsp_range(index, edit.start, edit.end), new_text=edit.replacement)]}),
    )


def _fixed_texts(snapshot: Snapshot) -> dict[str, str]:
    """The new text of every editor document that "fix all safe" changes, by URI."""
    from leaklint.fixes.fixer import fix_text

    linted = snapshot.linted
    if linted.settings is None or not any(f.fix is not None and f.fix.applicability is Applicability.SAFE for f in linted.findings):
        return {}
    fixed = fix_text(linted.text, linted.path, linted.rules, linted.settings, unsafe=False)
    if not fixed.changed:
        return {}
    if not snapshot.is_notebook:
        return {snapshot.uri: fixed.fixed}
    from leaklint.notebook import NotebookError

    assert linted.program is not None
    try:
        sources = linted.program.fixed_sources(fixed.fixed, fixed.passes)
    except NotebookError:
        return {}
    return {linted.cells[number - 1].uri: source for number, source in sources.items()}


def fix_all_action(snapshot: Snapshot) -> types.CodeAction | None:
    """Every safe fix at once, as ``leaklint check --fix`` applies them."""
    if snapshot.fix_all is None:
        snapshot.fix_all = _fixed_texts(snapshot)
    if not snapshot.fix_all:
        return None
    changes: dict[str, list[types.TextEdit]] = {}
    for uri, new_text in snapshot.fix_all.items():
        number = snapshot.cell_number(uri)
        target = snapshot.target(number)
        if target is None:
            return None
        _, old_text, index = target
        changes[uri] = [types.TextEdit(range=lsp_range(index, 0, len(old_text)), new_text=new_text)]
    return types.CodeAction(title="leaklint: apply all safe fixes", kind=FIX_ALL_KIND, edit=types.WorkspaceEdit(changes=changes))
