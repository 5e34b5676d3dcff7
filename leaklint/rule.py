"""The base every rule module builds on.

A rule is a class with its metadata, its documentation and its examples as class attributes, and a
``check`` method that reads the shared program facts (``leaklint.analysis``) and yields
:class:`Violation` objects. The engine turns violations into positioned :class:`Finding` objects, so
rules never deal with line numbers, paths, suppressions or configuration.

A rule is one module, ``rules/llNNN_name.py``: its metadata and documentation, what a file must
contain before it can fire (``needs``, read by :mod:`leaklint.gate`), its detection (``check``
and the module's helpers), its fixes, its ``VALID``/``INVALID`` examples and its runtime repro.
``docs/adding-a-rule.md`` walks through writing one; ``tools/new_rule.py`` writes the skeleton.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Iterator

from leaklint.findings import Confidence, Severity
from leaklint.gate import NOTHING, Need
from leaklint.runtime.repro import Repro as RuntimeRepro

if TYPE_CHECKING:
    import libcst as cst

    from leaklint.analysis.facts import ModuleFacts
    from leaklint.fixes.spec import SuggestedFix

RULE_CODE = re.compile(r"^[A-Z]{2,4}[0-9]{3}$")

#: Sections every rule's ``docs`` must have, in this order (the shape of a Ruff rule page).
DOC_SECTIONS = (
    "What it finds", "Why it matters", "Example", "Use instead", "Fix safety", "Known false positives", "References",
)


#: What each host meter of a repro measures, as a rule page says it.
HOST_METER_WORDS = {
    "heap": "host heap bytes (glibc mallinfo2: C++ objects such as autograd graph nodes or traced graphs)",
    "python": "bytes of Python objects (tracemalloc)",
    "uss": "the DataLoader workers' private memory (USS, through psutil)",
}


@dataclass(frozen=True)
class Violation:
    """What a rule reports: the node to point at, the message, and how sure it is."""

    node: cst.CSTNode
    message: str
    confidence: Confidence
    help: str | None = None
    #: The statement holding ``node``; suppression comments on its first or last line count.
    statement: cst.CSTNode | None = None
    #: The edit that repairs this finding, if the rule can propose one (see ``leaklint.fixes.spec``).
    fix: SuggestedFix | None = None


#: The precision on real code a rule needs to be on by default (issue 21's bar).
PRECISION_BAR = 0.9


@dataclass(frozen=True)
class Measured:
    """What the benchmarks measured of a rule at the default confidence (``bench/RESULTS.md``):
    its findings on ``bench/realcode`` judged true, false and debatable, and on ``bench/leaks``
    those on a marked leaking line (true) and elsewhere (false). Precision is true / (true +
    false); debatable findings are left out of it."""

    realcode: tuple[int, int, int]
    leaks: tuple[int, int]

    @property
    def realcode_precision(self) -> float | None:
        true, false, _ = self.realcode
        return true / (true + false) if true + false else None

    @property
    def leaks_precision(self) -> float | None:
        true, false = self.leaks
        return true / (true + false) if true + false else None

    @property
    def on_by_default(self) -> bool:
        """Precision decides: at least :data:`PRECISION_BAR` on real code; a rule that real code
        gave no decided finding is judged on the leak benchmark, and one neither measured is on."""
        precision = self.realcode_precision
        if precision is None:
            precision = self.leaks_precision
        return precision is None or precision >= PRECISION_BAR

    def describe(self, enabled: bool | None = None) -> str:
        """One paragraph for the rule's page (``enabled``: whether the rule is on by default, when
        the rule decides that itself rather than by these figures)."""
        true, false, debatable = self.realcode

        def share(precision: float | None) -> str:
            return f"precision {precision:.2f}" if precision is not None else "precision not measured"

        real = f"{true} true, {false} false, {debatable} debatable: {share(self.realcode_precision)}"
        leaks = f"{self.leaks[0]} on a leaking line, {self.leaks[1]} elsewhere: {share(self.leaks_precision)}"
        if enabled is not None and enabled != self.on_by_default:
            state = "on by default" if enabled else "off by default by choice, though its precision clears the bar (the docs say why)"
        else:
            state = (
                "on by default"
                if self.on_by_default
                else f"a preview rule, off by default until its precision on real code reaches {PRECISION_BAR:.0%}"
            )
        return f"Measured at the default confidence on bench/realcode ({real}) and bench/leaks ({leaks}); {state}."


class Rule:
    """Subclass this in ``rules/llNNN_name.py`` and set every class attribute."""

    code: ClassVar[str]
    name: ClassVar[str]
    severity: ClassVar[Severity]
    summary: ClassVar[str]
    #: The default hint line (``help: ...``); a violation may override it.
    help: ClassVar[str]
    #: Markdown with the sections in :data:`DOC_SECTIONS`.
    docs: ClassVar[str]
    #: Off-by-default rules run only when selected explicitly (by code, prefix or ``ALL``).
    #: leaklint's own rules do not set it: their measured precision decides (``measured``).
    default_enabled: ClassVar[bool] = True
    #: The benchmarks' figures for this rule (``Measured``); None for a rule never measured.
    measured: ClassVar[Measured | None] = None
    #: What a file must contain before this rule can report in it (:mod:`leaklint.gate`): a
    #: necessary condition of every finding. The gate skips the files no selected rule needs, so
    #: the libcst parse and the analysis are paid only where a rule may fire.
    needs: ClassVar[Need] = NOTHING
    #: What a finding above low confidence needs besides (the evidence it rests on); None: nothing more.
    needs_above_low: ClassVar[Need | None] = None
    #: The rule's findings are torch autograd graphs kept alive or recorded for nothing: it does
    #: not run on a file that imports TensorFlow or Keras and nothing of torch
    #: (:attr:`ModuleFacts.records_autograd`), where a model's output is no autograd graph.
    autograd: ClassVar[bool] = False
    #: Whether the rule proposes fixes (its docs then say how safe they are under "Fix safety").
    fixable: ClassVar[bool] = False
    #: Code snippets that must produce no finding of this rule.
    VALID: ClassVar[tuple[str, ...]] = ()
    #: Code snippets whose lines marked ``# expect: LLNNN`` must produce exactly those findings.
    INVALID: ClassVar[tuple[str, ...]] = ()
    #: The runtime repro ``leaklint verify`` measures: a rule declares ``class Repro(Rule.Repro)``
    #: in its body with a leaky and a fixed loop body. This base itself means "no repro".
    Repro: ClassVar[type[RuntimeRepro]] = RuntimeRepro

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("measured") is not None and "default_enabled" not in cls.__dict__:
            cls.default_enabled = cls.measured.on_by_default  # type: ignore[union-attr]

    def check(self, facts: ModuleFacts) -> Iterator[Violation]:
        """The violations in one file. Import the detector here, not at the top of the rule's
        module (see the module docstring)."""
        raise NotImplementedError

    @classmethod
    def doc_page(cls) -> str:
        """The full page that ``leaklint rule CODE`` prints."""
        state = "" if cls.default_enabled else " (off by default: enable with --select " + cls.code + ")"
        header = f"# {cls.code} {cls.name}\n\nSeverity: {cls.severity.value}{state}\n"
        measured = f"\n{cls.measured.describe(cls.default_enabled)}\n" if cls.measured is not None else ""
        return f"{header}{measured}\n{cls.summary}\n\n{cls.docs.strip()}\n{cls._repro_page()}"

    @classmethod
    def has_repro(cls) -> bool:
        return cls.Repro is not RuntimeRepro

    @classmethod
    def _repro_page(cls) -> str:
        if not cls.has_repro():
            return ""
        from leaklint.runtime.repro import OPTIONAL_FRAMEWORKS, RUNTIME_EXTRA

        repro = cls.Repro
        needs = ", ".join(repro.requires)
        frameworks = [name for name in repro.requires if name in OPTIONAL_FRAMEWORKS]
        install = f"`{RUNTIME_EXTRA}` for the verifier"
        if "torch" in repro.requires:
            install = (
                "first torch 2.1 or newer, the build for your machine, which no extra of leaklint "
                "brings: `pip install torch --index-url https://download.pytorch.org/whl/cpu` on a "
                f"CPU-only one; then {install}"
            )
        for name in frameworks:
            install += f" and `pip install {name}`, which no extra of leaklint installs; without {name} the rule is reported as skipped"
        host = HOST_METER_WORDS.get(repro.host_meter, repro.host_meter)
        if repro.tensors:
            measured = (
                "live tensor bytes gained per iteration after the warm-up, the peak within an iteration and "
                f"the tensor bytes still held at the end, {host} gained per iteration, and the time per step"
            )
        else:
            measured = (
                f"{host} gained per iteration after the warm-up, and the time per step (this repro measures "
                "host memory, not tensor bytes)"
            )
        return (
            f"\n## Runtime repro\nRun it with `leaklint verify {cls.code}` (needs {needs}: {install}). "
            f"It runs the leaky and the fixed loop body below and measures, for each, {measured}; then the "
            "verdict: growth, host growth, peak or perf confirmed, or not confirmed. This rule claims "
            f"{cls.severity.value}.\n\n```python\n{repro.source().rstrip()}\n```\n"
        )
