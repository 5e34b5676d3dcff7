"""Each rule's measured figures, from the two benchmarks, as its ``measured = Measured(...)`` line.

    python bench/realcode/score.py /tmp/realcode --select ALL --save-findings /tmp/realcode.json
    python bench/realcode/score.py /tmp/corpus --select ALL --triage bench/realcode/triage-libraries.jsonl --save-findings /tmp/libraries.json
    python bench/leaks/score.py --select ALL --json /tmp/leaks.json
    python bench/measured.py --realcode /tmp/realcode.json --libraries /tmp/libraries.json --leaks /tmp/leaks.json [--write]

A rule's ``Measured`` (``leaklint/rule.py``) decides whether it is on by default, so it must be
what the benchmarks say of the rule at the default confidence, with every rule run (``--select
ALL``: a preview rule is measured too). From the real-code reports (the scripts and notebooks of
bench/realcode and, with ``--libraries``, the library code of ``bench/corpus.sh``, each against its
own triage file; the figures are their sums) it counts each rule's findings that the triage judged
true, false and debatable (untriaged ones are listed: triage them first);
from the leak benchmark's JSON, each rule's findings on a marked line and elsewhere. It prints one
line per rule, marks the rules whose figures or default state would change, and with ``--write``
rewrites the ``measured = Measured(...)`` line of each rule module that has one. Exit status: 0,
1 when some real-code findings are untriaged (nothing is written then), 2 for bad input.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench" / "realcode"))

from leaklint.registry import all_rules  # noqa: E402
from leaklint.rule import Measured  # noqa: E402
from score import to_findings  # noqa: E402  (bench/realcode/score.py)
from triage import load_triage, match  # noqa: E402

MEASURED_LINE = re.compile(r"^(\s*)measured = Measured\(realcode=\(\d+, \d+, \d+\), leaks=\(\d+, \d+\)\)$", re.M)


def realcode_counts(report: Path, triage: Path, corpus: Path) -> tuple[dict[str, tuple[int, int, int]], list[str]]:
    """Per rule: (true, false, debatable) of the triaged findings; and the untriaged ones, described."""
    raw = json.loads(report.read_text(encoding="utf-8"))
    findings = to_findings(raw, corpus)
    matching = match(findings, load_triage(triage))
    counts: dict[str, Counter] = {}
    for index, entry in matching.verdicts.items():
        counts.setdefault(findings[index].code, Counter())[entry.verdict] += 1
    untriaged = [f"{finding.location()}: {finding.code}" for finding in matching.untriaged]
    return {code: (c["true"], c["false"], c["debatable"]) for code, c in counts.items()}, untriaged


def leak_counts(report: Path) -> dict[str, tuple[int, int]]:
    """Per rule: (findings on a marked line, findings elsewhere), from ``score.py --json``."""
    data = json.loads(report.read_text(encoding="utf-8"))
    counts = {}
    for code, figures in data["precision_by_rule"].items():
        counts[code] = (figures["found"], figures["total"] - figures["found"])
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--realcode", type=Path, required=True, help="leaklint's JSON report on bench/realcode (--select ALL)")
    parser.add_argument("--leaks", type=Path, required=True, help="bench/leaks/score.py --select ALL --json output")
    parser.add_argument("--corpus", type=Path, default=Path("/tmp/realcode"), help="the real-code corpus folder the report is of")
    parser.add_argument("--triage", type=Path, default=ROOT / "bench" / "realcode" / "triage.jsonl")
    parser.add_argument("--libraries", type=Path, help="leaklint's JSON report on the library corpus of bench/corpus.sh (--select ALL)")
    parser.add_argument("--libraries-corpus", type=Path, default=Path("/tmp/corpus"), help="the library corpus folder that report is of")
    parser.add_argument("--libraries-triage", type=Path, default=ROOT / "bench" / "realcode" / "triage-libraries.jsonl")
    parser.add_argument("--write", action="store_true", help="rewrite the measured line of each rule module")
    args = parser.parse_args(argv)
    try:
        real, untriaged = realcode_counts(args.realcode, args.triage, args.corpus.resolve())
        if args.libraries is not None:
            libraries, also_untriaged = realcode_counts(args.libraries, args.libraries_triage, args.libraries_corpus.resolve())
            untriaged += also_untriaged
            for code, figures in libraries.items():
                real[code] = tuple(a + b for a, b in zip(real.get(code, (0, 0, 0)), figures))  # type: ignore[assignment]
        leaks = leak_counts(args.leaks)
    except (OSError, ValueError, KeyError) as error:
        print(f"measured.py: cannot read the reports ({type(error).__name__}: {error})", file=sys.stderr)
        return 2
    if untriaged:
        print(f"{len(untriaged)} real-code findings are untriaged; triage them first:")
        for line in untriaged:
            print(f"  {line}")
        return 1
    for code, rule in sorted(all_rules().items()):
        module = sys.modules[rule.__module__]
        path = Path(module.__file__ or "")
        if ROOT not in path.parents:
            continue  # a plugin's rule
        measured = Measured(realcode=real.get(code, (0, 0, 0)), leaks=leaks.get(code, (0, 0)))
        was = rule.measured
        change = "" if was == measured else f"   (was {was.realcode}, {was.leaks})" if was else "   (new)"
        state = "on" if measured.on_by_default else "preview"
        if was is not None and was.on_by_default != measured.on_by_default:
            change += f"; turns {state}"
        print(f"{code}  realcode={measured.realcode} leaks={measured.leaks}  {state}{change}")
        if args.write and was != measured:
            text = path.read_text(encoding="utf-8")
            new, count = MEASURED_LINE.subn(
                lambda m: f"{m.group(1)}measured = Measured(realcode={measured.realcode}, leaks={measured.leaks})", text
            )
            if count != 1:
                print(f"measured.py: {path.name}: no single 'measured = Measured(...)' line to rewrite", file=sys.stderr)
                return 2
            path.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
