"""LL901 unused-suppression: a suppression comment that suppressed nothing (Ruff's RUF100)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from leaklint.findings import Severity
from leaklint.gate import Words
from leaklint.rule import Rule, Violation

if TYPE_CHECKING:
    from leaklint.analysis.facts import ModuleFacts


class UnusedSuppression(Rule):
    code = "LL901"
    name = "unused-suppression"
    severity = Severity.HYGIENE
    summary = "A suppression comment (noqa, leaklint: ignore, a disable range, a file-level noqa) that suppressed no finding of the rules that ran."
    help = "remove the unused code (or the whole comment): a stale suppression would hide the next real leak on that line"
    fixable = True
    #: Every suppression comment holds one of these words. (The engine runs this rule itself, after
    #: the others, whatever the gate says; the need keeps the gate's view of the rule true.)
    needs = Words("noqa", "leaklint")
    #: Off by default, like Ruff's RUF100: see "Why it matters".
    default_enabled = False
    docs = """
## What it finds
A suppression comment naming a leaklint code that suppressed no finding in this run:
`# noqa: LL101`, `# leaklint: ignore[LL101]`, a `# leaklint: disable[LL101]` range (reported
at its `disable`; the fix edits its `enable` too) or a file-level `# leaklint: noqa: LL101`. For a
comment with several codes, only the unused ones are reported. A blanket `# leaklint: ignore`,
`# leaklint: disable` or `# leaklint: noqa` is reported when it suppressed nothing at all.

Only codes of rules that ran on the file are judged: a code of a rule that is not selected, or
that `per-file-ignores` turns off for the file, is left alone, and so is a prefix (`LL1`) unless
every rule it names ran. Foreign codes (`E501`, `F401`, `B008`) are never reported; a bare
`# noqa` is not reported either (see "Known false positives"). A finding below the minimum
confidence still counts as suppressed: removing its comment would bring it back under
`--min-confidence low`. A comment that names `LL901` itself is never reported, and neither is any
comment in a file with a file-level `# leaklint: noqa: LL901` (or inside a
`# leaklint: disable[LL901]` range).

The rule reads the other rules' results, so the engine runs it after them: it has no detection of
its own in this module, and it runs only when selected.

## Why it matters
A suppression outlives the code it was written for. After the leak is fixed (or the code moves),
a `# noqa: LL101` stays on the line and silently hides the next real leak there: the comment
promises a reviewer that someone looked at a finding that no longer exists. Reporting the stale
ones keeps every remaining suppression a deliberate decision.

It is off by default, as Ruff's `unused-noqa` (RUF100) is: whether a suppression is used depends
on the rules selected in this run, so a run with fewer rules (`--select LL1`, a pre-commit hook
with a narrower selection) would call the others' suppressions stale if it were always on. Turn it
on where the full set of rules runs: `--extend-select LL901`, or `extend-select = ["LL901"]` in
`[tool.leaklint]`.

## Example
```python
for batch in loader:
    loss = criterion(model(batch.x), batch.y)
    loss.backward()
    total += loss.item()  # noqa: LL101
```

## Use instead
```python
for batch in loader:
    loss = criterion(model(batch.x), batch.y)
    loss.backward()
    total += loss.item()
```

## Fix safety
**Safe**: the fix only edits comments, so the program is unchanged. It removes the unused codes and
keeps the others (`# noqa: LL101, E501` becomes `# noqa: E501`) and the rest of the comment
(`# leaklint: ignore[LL101] tiny buffer` becomes `# tiny buffer`); a comment left empty goes, with
its line when it stood alone. For a range, the same codes leave its `enable` comment too, so the
pair still matches.

## Known false positives
A suppression is judged by this run: a comment for a finding that only shows with another
configuration (a different `select`, or a rule of a plug-in pack that is not installed) looks
unused when that rule did not run; only codes of rules that ran are reported, but a blanket
`# leaklint: ignore` is judged by the rules that ran. A bare `# noqa` is never reported, unlike
Ruff's RUF100: leaklint runs beside flake8 or Ruff, and a bare `# noqa` usually serves them;
leaklint cannot see their findings, just as Ruff leaves codes listed in `lint.external` alone.

## References
- Ruff, `unused-noqa` (RUF100): https://docs.astral.sh/ruff/rules/unused-noqa/
- Ruff, error suppression and range suppressions: https://docs.astral.sh/ruff/linter/#error-suppression
- flake8-noqa (NQA102, "`# noqa` has no violations"): https://github.com/plinth666/flake8-noqa
"""

    VALID = (
        """
import torch

total = 0.0
for x, y in loader:
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    total += loss.item()  # noqa
    print(total)  # noqa: E501, T201
""",
        """
# Rules that did not run are not judged: LL101 is not selected in this example.
history = []  # noqa: LL101
cache = {}  # leaklint: ignore[LL301]
# leaklint: disable[LL102]
kept = []
# leaklint: enable[LL102]
""",
        """
# leaklint: noqa: LL901
value = 1  # leaklint: ignore
""",
    )
    INVALID = (
        """
total = 0.0
for step in range(10):
    total += step  # leaklint: ignore  # expect: LL901
""",
        """
def train(loader):
    # leaklint: disable  # expect: LL901
    for batch in loader:
        print(batch)
    # leaklint: enable
""",
    )

    def check(self, facts: ModuleFacts) -> Iterator[Violation]:
        """Nothing here: the engine reports this rule after the others ran
        (:func:`leaklint.suppressions.unused_suppression_findings`)."""
        return iter(())
