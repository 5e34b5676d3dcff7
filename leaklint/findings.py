"""The data model every stage shares: plain frozen dataclasses, no behaviour beyond ordering."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Severity(str, enum.Enum):
    """What the anti-pattern costs.

    ``leak``: memory grows every iteration until the job dies. ``peak``: no growth, but a higher
    high-water mark (out-of-memory sooner). ``perf``: time, not memory. ``hygiene``: nothing at
    run time; leaklint's own comments (a suppression that no longer suppresses anything).
    """

    LEAK = "leak"
    PEAK = "peak"
    PERF = "perf"
    HYGIENE = "hygiene"

    def __str__(self) -> str:
        return self.value


class Confidence(str, enum.Enum):
    """How sure the analysis is that the finding is real (not how bad it is)."""

    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"

    @property
    def rank(self) -> int:
        return _CONFIDENCE_RANK[self]

    def __str__(self) -> str:
        return self.value

    def __lt__(self, other: object) -> bool:  # type: ignore[override]
        if not isinstance(other, Confidence):
            return NotImplemented
        return self.rank < other.rank

    def __le__(self, other: object) -> bool:  # type: ignore[override]
        if not isinstance(other, Confidence):
            return NotImplemented
        return self.rank <= other.rank

    def __gt__(self, other: object) -> bool:  # type: ignore[override]
        if not isinstance(other, Confidence):
            return NotImplemented
        return self.rank > other.rank

    def __ge__(self, other: object) -> bool:  # type: ignore[override]
        if not isinstance(other, Confidence):
            return NotImplemented
        return self.rank >= other.rank


_CONFIDENCE_RANK = {Confidence.LOW: 0, Confidence.MEDIUM: 1, Confidence.HIGH: 2}


class Applicability(str, enum.Enum):
    """How safely a fix can be applied (the same three levels Ruff uses).

    ``safe``: keeps what the program computes (values, types); applied by ``--fix``.
    ``unsafe``: changes behaviour on purpose (gradient flow, what runs under autograd);
    applied only with ``--unsafe-fixes``. ``display-only``: a suggestion to read, never applied.
    """

    SAFE = "safe"
    UNSAFE = "unsafe"
    DISPLAY_ONLY = "display-only"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class TextEdit:
    """Replace ``[start, end)`` (character offsets in the decoded source) with ``replacement``.

    Lines and columns (1-based, end exclusive) describe the same span for reports and editors.
    In a notebook's reported findings, ``cell`` names the cell (1-based, every cell counted) and
    the offsets, lines and columns are within that cell's source.
    """

    start: int
    end: int
    replacement: str
    line: int
    column: int
    end_line: int
    end_column: int
    cell: int | None = None


@dataclass(frozen=True)
class Fix:
    """A suggested edit for one finding: what it does, how safe it is, and the text edits."""

    title: str
    applicability: Applicability
    edits: tuple[TextEdit, ...]

    def with_applicability(self, applicability: Applicability) -> Fix:
        return Fix(self.title, applicability, self.edits)


@dataclass(frozen=True)
class Finding:
    """One reported anti-pattern. Lines are 1-based; columns are 1-based, ``end_column`` exclusive.

    In a Jupyter notebook, ``cell`` is the cell's number (1-based, markdown cells counted, as Ruff
    numbers them) and every line is a line of that cell; ``cell`` is None in a Python file.
    """

    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    code: str
    name: str
    severity: Severity
    confidence: Confidence
    message: str
    help: str
    # Lines of the statement that holds the finding: a suppression comment on either counts.
    statement_start: int = field(default=0, compare=False)
    statement_end: int = field(default=0, compare=False)
    #: The suggested fix, if the rule has one for this finding.
    fix: Fix | None = None
    #: The notebook cell the lines are in (None outside notebooks).
    cell: int | None = None

    def sort_key(self) -> tuple[str, int, int, int, str]:
        return (self.path, self.cell or 0, self.line, self.column, self.code)


class ErrorKind(str, enum.Enum):
    """Why a file could not be linted (completely)."""

    NOT_FOUND = "not-found"
    IO = "io-error"
    DECODE = "decode-error"
    SYNTAX = "syntax-error"
    TOO_COMPLEX = "too-complex"
    TOO_LARGE = "too-large"
    #: Valid Python that libcst cannot parse (e.g. ``(x): int = 1``): a limit of ours, not a bug
    #: in the file.
    UNSUPPORTED = "unsupported-syntax"
    INTERNAL = "internal-error"
    #: A ``.ipynb`` file that is not a Jupyter notebook leaklint can read (bad JSON, not nbformat 4).
    INVALID_NOTEBOOK = "invalid-notebook"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class FileError:
    """A file leaklint could not read, parse, or fully analyse. Always exit code 2."""

    path: str
    kind: ErrorKind
    reason: str
    rule: str | None = None

    def sort_key(self) -> tuple[str, str, str]:
        return (self.path, self.rule or "", self.reason)

    def describe(self) -> str:
        """The one-line stderr message, e.g. ``a.py: error: syntax error at 3:7: ...``."""
        where = f" (rule {self.rule})" if self.rule else ""
        return f"{self.path}: error{where}: {self.reason}"


@dataclass(frozen=True)
class LintResult:
    """Everything one run produced, in stable order."""

    findings: tuple[Finding, ...]
    errors: tuple[FileError, ...]
    files_checked: int

    @property
    def files_with_findings(self) -> int:
        return len({f.path for f in self.findings})
