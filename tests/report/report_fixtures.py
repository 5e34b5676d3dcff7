"""Hand-built results and fake rules shared by the ``test_report_*`` modules.

The reporters must not depend on the real rule set (which other modules own and which changes), so
the tests describe three small rules here and build the findings directly.
"""

from __future__ import annotations

from leaklint.findings import Confidence, ErrorKind, FileError, Finding, LintResult, Severity
from leaklint.rule import Rule

_DOCS = """\
## What it finds

{what}

## Why it matters

It keeps memory alive.

## Example

```python
total += loss
```

## Use instead

```python
total += loss.item()
```

## Known false positives

None known.
"""


class LossAccumulation(Rule):
    code = "LL101"
    name = "loss-accumulation"
    severity = Severity.LEAK
    summary = "A loss tensor is accumulated with its autograd graph."
    help = "accumulate loss.item() or loss.detach()"
    docs = _DOCS.format(what="Accumulating a loss tensor.")


class HistoryAppend(Rule):
    code = "LL102"
    name = "history-append"
    severity = Severity.LEAK
    summary = "A graph-carrying tensor is appended to a list that outlives the loop."
    help = "append t.detach() (or t.item())"
    docs = _DOCS.format(what="Appending a tensor to a long-lived list.")


class EvalWithoutNoGrad(Rule):
    code = "LL401"
    name = "eval-without-no-grad"
    severity = Severity.PEAK
    summary = "Evaluation runs without torch.no_grad()."
    help = "wrap the evaluation loop in `with torch.no_grad():`"
    docs = _DOCS.format(what="Evaluation that builds graphs.")
    default_enabled = False


RULES: dict[str, type[Rule]] = {r.code: r for r in (LossAccumulation, HistoryAppend, EvalWithoutNoGrad)}

TRAIN_SOURCE = """\
import torch

total_loss = 0
for batch in loader:
    loss = model(batch)
    total_loss += loss
    history.append(loss)
"""

EVAL_SOURCE = """\
def evaluate(model, loader):
\tfor batch in loader:
\t\tout = model(batch)
"""

SOURCES = {"train.py": TRAIN_SOURCE, "src/eval.py": EVAL_SOURCE}


def finding(
    rule: type[Rule], path: str, line: int, column: int, end_column: int, message: str, **kw: object
) -> Finding:
    """A finding of ``rule``; ``end_line`` defaults to ``line``, help to the rule's help."""
    values: dict[str, object] = {
        "path": path,
        "line": line,
        "column": column,
        "end_line": line,
        "end_column": end_column,
        "code": rule.code,
        "name": rule.name,
        "severity": rule.severity,
        "confidence": Confidence.HIGH,
        "message": message,
        "help": rule.help,
    }
    values.update(kw)
    return Finding(**values)  # type: ignore[arg-type]


# Sorted as the engine sorts them: path, line, column, code.
EVAL_FINDING = finding(
    EvalWithoutNoGrad,
    "src/eval.py",
    3,
    9,
    21,
    "'model(batch)' runs with autograd enabled inside 'evaluate'",
    confidence=Confidence.MEDIUM,
)
ACCUMULATE_FINDING = finding(
    LossAccumulation,
    "train.py",
    6,
    5,
    23,
    "'loss' is accumulated into 'total_loss' with its autograd graph; every iteration's graph stays alive",
)
APPEND_FINDING = finding(
    HistoryAppend,
    "train.py",
    7,
    20,
    24,
    "'loss' is appended to 'history' with its autograd graph",
)

FINDINGS = (EVAL_FINDING, ACCUMULATE_FINDING, APPEND_FINDING)


def result(*findings: Finding, errors: tuple[FileError, ...] = (), files_checked: int = 2) -> LintResult:
    return LintResult(findings=tuple(findings), errors=errors, files_checked=files_checked)


SYNTAX_ERROR = FileError(path="broken.py", kind=ErrorKind.SYNTAX, reason="syntax error at 3:7: expected ':'")
