"""Hover on a finding: what was found, and the rule's whole page (``leaklint rule CODE``).

The page is the rule's own documentation, already markdown (what it finds, why it matters, an
example, what to use instead, fix safety, known false positives), so the editor shows exactly what
the command line prints, without the last ``leaklint verify`` numbers, which live on the machine
that measured them.
"""

from __future__ import annotations

from lsprotocol import types

from leaklint.server.diagnostics import finding_range
from leaklint.server.snapshot import Snapshot


def _contains(area: types.Range, position: types.Position) -> bool:
    here = (position.line, position.character)
    return (area.start.line, area.start.character) <= here <= (area.end.line, area.end.character)


def hover(snapshot: Snapshot, uri: str, position: types.Position) -> types.Hover | None:
    """The docs of the rules whose findings cover ``position`` in ``uri``; None where there is none."""
    from leaklint.registry import all_rules

    target = snapshot.target(snapshot.cell_number(uri))
    if target is None:
        return None
    index = target[2]
    here = [(finding, finding_range(index, finding)) for finding in snapshot.findings_for(uri)]
    here = [(finding, area) for finding, area in here if _contains(area, position)]
    if not here:
        return None
    rules = all_rules()
    pages = []
    for finding, _ in here:
        rule = rules.get(finding.code)
        page = rule.doc_page() if rule is not None else ""
        pages.append(f"**{finding.code}** {finding.message} ({finding.severity}, {finding.confidence} confidence)\n\n{page}")
    return types.Hover(
        contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value="\n\n---\n\n".join(pages)),
        range=here[0][1],
    )
