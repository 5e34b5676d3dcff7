"""Lint real PyTorch-heavy packages from PyPI and count findings per rule and per 10k lines.

    python bench/realworld.py [--cache DIR] [--min-confidence medium] [--json FILE]

Downloads pinned wheels (pure Python sources of real training and evaluation code) into a cache
directory once, unpacks only their ``.py`` files, lints them with every rule selected, and prints
a table. Triage of every finding for these versions lives in bench/realworld_triage.md.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import zipfile
from collections import Counter
from pathlib import Path

#: Pinned so that the triage stays valid; bump together with bench/realworld_triage.md.
PACKAGES = {
    "transformers": "4.46.3",
    "lightning": "2.4.0",
    "timm": "1.0.11",
    "accelerate": "1.1.1",
    "diffusers": "0.31.0",
}
DEFAULT_CACHE = Path.home() / ".cache" / "leaklint-realworld"


def fetch(cache: Path) -> list[Path]:
    """Download each wheel (no dependencies) and unpack its Python files; idempotent."""
    roots = []
    for name, version in PACKAGES.items():
        root = cache / f"{name}-{version}"
        roots.append(root)
        if (root / ".complete").exists():
            continue
        wheels = cache / "wheels"
        wheels.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
             "--dest", str(wheels), f"{name}=={version}"],
            check=True,
        )
        wheel = next(wheels.glob(f"{name.replace('-', '_')}-{version}-*.whl"))
        with zipfile.ZipFile(wheel) as archive:
            for member in archive.namelist():
                if member.endswith(".py"):
                    archive.extract(member, root)
        (root / ".complete").write_text("")
    return roots


def count_lines(roots: list[Path]) -> int:
    return sum(len(path.read_bytes().splitlines()) for root in roots for path in root.rglob("*.py"))


def lint(roots: list[Path], min_confidence: str) -> list[dict]:
    command = [sys.executable, "-m", "leaklint", "--select", "ALL", "--format", "json", "--exit-zero",
               "--min-confidence", min_confidence, *map(str, roots)]
    completed = subprocess.run(command, capture_output=True, text=True)
    if completed.stderr.strip():
        print(completed.stderr, file=sys.stderr)
    return json.loads(completed.stdout or "[]")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--min-confidence", default="medium", choices=["low", "medium", "high"])
    parser.add_argument("--json", type=Path, help="also write the findings here")
    args = parser.parse_args()

    roots = fetch(args.cache)
    lines = count_lines(roots)
    findings = lint(roots, args.min_confidence)
    if args.json:
        args.json.write_text(json.dumps(findings, indent=2))
    by_rule = Counter(f["code"] for f in findings)
    print(f"{', '.join(f'{n} {v}' for n, v in PACKAGES.items())}")
    print(f"{lines:,} lines, {len(findings)} findings at min-confidence {args.min_confidence}")
    print(f"{'rule':<8}{'findings':>10}{'per 10k lines':>16}")
    for code, count in sorted(by_rule.items()):
        print(f"{code:<8}{count:>10}{count / lines * 10_000:>16.2f}")
    for finding in findings:
        path = finding["path"].replace(str(args.cache) + "/", "")
        print(f"{path}:{finding['line']}: {finding['code']} [{finding['confidence']}] {finding['message']}")


if __name__ == "__main__":
    main()
