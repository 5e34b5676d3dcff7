"""Write the skeleton of a new rule: its module in rules/ and a leaky fixture that demonstrates it.

    python tools/new_rule.py LL601 cuda-sync-in-loop [--severity leak|peak|perf]

The module has every part a rule needs (metadata, every docs section, the gate's need, detection,
VALID/INVALID examples, a runtime repro) and passes the test-suite as written: it reports calls
of a placeholder API inside a loop. Replace each ``TODO`` with the rule's own story; the tests
then tell you what is still inconsistent. docs/adding-a-rule.md walks through it.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CODE = re.compile(r"^[A-Z]{2,4}[0-9]{3}$")
NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
SEVERITIES = ("leak", "peak", "perf")

MODULE = '''\
"""{code} {name}: TODO one line: what the rule finds."""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from leaklint.analysis.facts import ModuleFacts
from leaklint.analysis.torch_api import TORCH_CODE
from leaklint.findings import Confidence, Severity
from leaklint.gate import Names
from leaklint.rule import Rule, Violation

#: TODO: the calls this rule reports, by qualified name (imports and aliases resolved).
{constant} = frozenset({{"torch.example_api"}})


class {class_name}(Rule):
    code = "{code}"
    name = "{name}"
    severity = Severity.{severity_member}
    summary = "TODO: one sentence, as the rules table shows it."
    help = "TODO: the hint printed under each finding: what to write instead"
    #: What a file must contain before this rule can fire: a necessary condition of every finding
    #: (leaklint/gate.py). Here: torch words, and the name of the API the rule reports.
    needs = TORCH_CODE & Names(*(api.rsplit(".", 1)[-1] for api in {constant}))
    docs = """
## What it finds
TODO: the code the rule reports, precisely: which calls or statements, in which context (a loop,
a per-step function), and what makes it quiet.

## Why it matters
TODO: why the memory grows (or the peak rises, or the step slows), step by step.

## Example
```python
import torch

for batch in loader:
    torch.example_api(batch)
```

## Use instead
```python
import torch

torch.example_api(first_batch)
for batch in loader:
    ...
```

## Fix safety
No automatic fix. TODO: if the rule proposes one, set `fixable = True`, say here whether it is
**Safe**, **Unsafe** or **Display only** and why, and build it with leaklint.fixes.spec.

## Known false positives
TODO: the code the rule reports wrongly, measured on bench/realcode.

## References
- TODO: the reports (issues, forum threads) that show this leak in real code.
"""

    VALID = (
        """
import torch

torch.example_api(x)
""",
        """
import torch

for batch in loader:
    other_api(batch)
""",
    )
    INVALID = (
        """
import torch

for batch in loader:
    torch.example_api(batch)  # expect: {code}
""",
        """
import torch as th

def train(loader):
    for batch in loader:
        th.example_api(batch)  # expect: {code}
""",
    )

    def check(self, facts: ModuleFacts) -> Iterator[Violation]:
        return find_violations(facts)

    class Repro(Rule.Repro):
        """TODO: what the leaky and the fixed loop body do (`leaklint verify {code}` measures them)."""

        def setup(self, ctx):
            import torch
            ctx.x = torch.randn(64, 64, device=ctx.device)
            ctx.kept = []

        def leaky(self, ctx):
            ctx.kept.append(ctx.x * 2)  # TODO: the rule's INVALID example, as one loop iteration

        def fixed(self, ctx):
            ctx.x * 2  # TODO: the same iteration, fixed as the rule's help says


# --- detection ------------------------------------------------------------------------------------
def find_violations(facts: ModuleFacts) -> Iterator[Violation]:
    """The violations in one file."""
    last_names = {{api.rsplit(".", 1)[-1] for api in {constant}}}
    for place in facts.index.calls_named(*last_names):
        call = place.node
        assert isinstance(call, cst.Call)
        if facts.imports.resolve(call.func) not in {constant} or not place.loops:
            continue
        yield Violation(
            node=call,
            message=f"'{{facts.describe(call)}}' runs in every iteration of a loop (TODO: why that leaks)",
            confidence=Confidence.HIGH,
        )
'''

FIXTURE = '''\
"""A training loop with {code} ({name}): TODO make it a realistic script of the kind the rule is about."""

import torch


def train(model, loader, optimizer):
    for batch in loader:
        optimizer.zero_grad()
        torch.example_api(batch)  # expect: {code}
        model(batch).sum().backward()
        optimizer.step()
'''


_TABLE = re.compile(r"(<!-- rules-table:start[^>]*-->\n)(.*?)(<!-- rules-table:end -->)", re.S)


def refresh_readme_table(root: Path) -> bool:
    """Write the rules table that ``leaklint rules --format markdown`` prints into the README, for
    the checkout whose leaklint this interpreter runs; False (nothing written) for another one."""
    import subprocess

    import leaklint

    if Path(leaklint.__file__).resolve().parents[1] != root.resolve():
        return False
    table = subprocess.run([sys.executable, "-m", "leaklint", "rules", "--format", "markdown"], check=True, capture_output=True, text=True).stdout
    readme = root / "README.md"
    text = readme.read_text(encoding="utf-8")
    readme.write_text(_TABLE.sub(lambda match: match.group(1) + table + match.group(3), text, count=1), encoding="utf-8")
    return True


def module_name(code: str, name: str) -> str:
    return f"{code.lower()}_{name.replace('-', '_')}"


def render(code: str, name: str, severity: str) -> tuple[str, str]:
    """The rule module's and the fixture's text."""
    words = {
        "code": code,
        "name": name,
        "class_name": "".join(part.capitalize() for part in name.split("-")),
        "severity_member": severity.upper(),
        "constant": "REPORTED_CALLS",
    }
    return MODULE.format(**words), FIXTURE.format(**words)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("code", help="the rule code, e.g. LL601 (two to four capitals, three digits)")
    parser.add_argument("name", help="the rule name, kebab-case, e.g. cuda-sync-in-loop")
    parser.add_argument("--severity", choices=SEVERITIES, default="leak")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to write into (default: this one)")
    args = parser.parse_args(argv)
    code = args.code.upper()
    if not CODE.match(code):
        parser.error(f"bad rule code {args.code!r}: two to four capitals and three digits, e.g. LL601")
    if not NAME.match(args.name):
        parser.error(f"bad rule name {args.name!r}: lower-case words joined by '-', e.g. cuda-sync-in-loop")
    rules = args.root / "rules"
    taken = sorted(p.name for p in rules.glob(f"{code.lower()}_*.py"))
    if taken:
        parser.error(f"{code} is taken: {', '.join(taken)}")
    stem = module_name(code, args.name)
    module_path = rules / f"{stem}.py"
    fixture_path = args.root / "fixtures" / f"leaky_{args.name.replace('-', '_')}.py"
    if fixture_path.exists():
        parser.error(f"{fixture_path} exists")
    module_text, fixture_text = render(code, args.name, args.severity)
    module_path.write_text(module_text, encoding="utf-8")
    fixture_path.write_text(fixture_text, encoding="utf-8")
    print(f"wrote {module_path.relative_to(args.root)} and {fixture_path.relative_to(args.root)}")
    if refresh_readme_table(args.root):
        print("updated the rules table in README.md")
    else:
        print("then paste the output of `leaklint rules --format markdown` into README.md's rules table")
    print(f"next: replace every TODO, then: pytest -q -k {code}; python -m leaklint --select {code} fixtures/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
